// CPU kernels for binary elementwise ops, comparisons, where(), and the fused backward of the
// activations (one pass over grad and the saved tensor instead of three or four ops).
#include <cmath>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"

namespace wick::cpu {

namespace {

template <class C>
bool is_nan(C x) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(x);
  } else {
    return false;
  }
}

struct Add {
  template <class C>
  C operator()(C a, C b) const {
    return a + b;
  }
};
struct Sub {
  template <class C>
  C operator()(C a, C b) const {
    return a - b;
  }
};
struct Mul {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) {
      return a && b;  // PyTorch: bool * bool is logical and
    } else {
      return a * b;
    }
  }
};
struct Div {
  template <class C>
  C operator()(C a, C b) const {
    return a / b;
  }
};
struct Pow {
  template <class C>
  C operator()(C a, C b) const {
    return static_cast<C>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  }
};
struct Maximum {  // NaN wins, as in PyTorch
  template <class C>
  C operator()(C a, C b) const {
    return is_nan(a) || a > b ? a : b;
  }
};
struct Minimum {
  template <class C>
  C operator()(C a, C b) const {
    return is_nan(a) || a < b ? a : b;
  }
};
struct Eq {
  template <class C>
  bool operator()(C a, C b) const {
    return a == b;
  }
};
struct Ne {
  template <class C>
  bool operator()(C a, C b) const {
    return a != b;
  }
};
struct Lt {
  template <class C>
  bool operator()(C a, C b) const {
    return a < b;
  }
};
struct Le {
  template <class C>
  bool operator()(C a, C b) const {
    return a <= b;
  }
};
struct Gt {
  template <class C>
  bool operator()(C a, C b) const {
    return a > b;
  }
};
struct Ge {
  template <class C>
  bool operator()(C a, C b) const {
    return a >= b;
  }
};
struct LogicalAnd {
  template <class C>
  bool operator()(C a, C b) const {
    return a != C(0) && b != C(0);
  }
};
struct LogicalOr {
  template <class C>
  bool operator()(C a, C b) const {
    return a != C(0) || b != C(0);
  }
};

// Backward of activations: a is the incoming gradient, b the saved input (or output, for sigmoid
// and tanh, whose derivatives are cheapest in terms of the result).
constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

struct ReluBackward {
  template <class C>
  C operator()(C g, C x) const {
    return x > C(0) ? g : C(0);
  }
};
struct SigmoidBackward {  // y = sigmoid(x): dy/dx = y (1 - y)
  template <class C>
  C operator()(C g, C y) const {
    return g * y * (C(1) - y);
  }
};
struct TanhBackward {  // y = tanh(x): dy/dx = 1 - y^2
  template <class C>
  C operator()(C g, C y) const {
    return g * (C(1) - y * y);
  }
};
struct SiluBackward {  // d/dx x s(x) = s(x) (1 + x (1 - s(x)))
  template <class C>
  C operator()(C g, C x) const {
    C s = C(1) / (C(1) + std::exp(-x));
    return g * s * (C(1) + x * (C(1) - s));
  }
};
struct GeluBackward {  // d/dx x Phi(x) = Phi(x) + x phi(x)
  template <class C>
  C operator()(C g, C x) const {
    C cdf = C(0.5) * (C(1) + std::erf(x * C(kSqrt1_2)));
    C pdf = C(kInvSqrt2Pi) * std::exp(C(-0.5) * x * x);
    return g * (cdf + x * pdf);
  }
};
struct GeluTanhBackward {
  template <class C>
  C operator()(C g, C x) const {
    C inner = C(kSqrt2OverPi) * (x + C(0.044715) * x * x * x);
    C t = std::tanh(inner);
    C dinner = C(kSqrt2OverPi) * (C(1) + C(3 * 0.044715) * x * x);
    return g * (C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * dinner);
  }
};

// Inputs and output share the dtype.
template <class Op>
void arithmetic_kernel(const Tensor& a, const Tensor& b, Tensor& out) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    binary_loop<T, T>(a, b, out, [](T x, T y) { return T(Op()(C(x), C(y))); });
  });
}

template <class Op>
void floating_kernel(const Tensor& a, const Tensor& b, Tensor& out) {
  visit_floating("binary kernel", a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    binary_loop<T, T>(a, b, out, [](T x, T y) { return T(Op()(C(x), C(y))); });
  });
}

// Inputs share a dtype; the output is bool.
template <class Op>
void predicate_kernel(const Tensor& a, const Tensor& b, Tensor& out) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    binary_loop<bool, T>(a, b, out, [](T x, T y) { return Op()(C(x), C(y)); });
  });
}

void where_kernel(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    ElementwiseLoop<4> loop({&out, &cond, &a, &b});
    loop.run([](char** p, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        bool c = *reinterpret_cast<const bool*>(p[1] + i * s[1]);
        *reinterpret_cast<T*>(p[0] + i * s[0]) =
            *reinterpret_cast<const T*>(p[c ? 2 : 3] + i * s[c ? 2 : 3]);
      }
    });
  });
}

}  // namespace

void register_binary_kernels(KernelRegistry& r) {
  r.add<BinaryKernel>(OpKey::add, kCPU, arithmetic_kernel<Add>);
  r.add<BinaryKernel>(OpKey::sub, kCPU, arithmetic_kernel<Sub>);
  r.add<BinaryKernel>(OpKey::mul, kCPU, arithmetic_kernel<Mul>);
  r.add<BinaryKernel>(OpKey::div, kCPU, floating_kernel<Div>);
  r.add<BinaryKernel>(OpKey::pow, kCPU, arithmetic_kernel<Pow>);
  r.add<BinaryKernel>(OpKey::maximum, kCPU, arithmetic_kernel<Maximum>);
  r.add<BinaryKernel>(OpKey::minimum, kCPU, arithmetic_kernel<Minimum>);
  r.add<BinaryKernel>(OpKey::eq, kCPU, predicate_kernel<Eq>);
  r.add<BinaryKernel>(OpKey::ne, kCPU, predicate_kernel<Ne>);
  r.add<BinaryKernel>(OpKey::lt, kCPU, predicate_kernel<Lt>);
  r.add<BinaryKernel>(OpKey::le, kCPU, predicate_kernel<Le>);
  r.add<BinaryKernel>(OpKey::gt, kCPU, predicate_kernel<Gt>);
  r.add<BinaryKernel>(OpKey::ge, kCPU, predicate_kernel<Ge>);
  r.add<BinaryKernel>(OpKey::logical_and, kCPU, predicate_kernel<LogicalAnd>);
  r.add<BinaryKernel>(OpKey::logical_or, kCPU, predicate_kernel<LogicalOr>);
  r.add<BinaryKernel>(OpKey::relu_backward, kCPU, floating_kernel<ReluBackward>);
  r.add<BinaryKernel>(OpKey::sigmoid_backward, kCPU, floating_kernel<SigmoidBackward>);
  r.add<BinaryKernel>(OpKey::tanh_backward, kCPU, floating_kernel<TanhBackward>);
  r.add<BinaryKernel>(OpKey::silu_backward, kCPU, floating_kernel<SiluBackward>);
  r.add<BinaryKernel>(OpKey::gelu_backward, kCPU, floating_kernel<GeluBackward>);
  r.add<BinaryKernel>(OpKey::gelu_tanh_backward, kCPU, floating_kernel<GeluTanhBackward>);
  r.add<WhereKernel>(OpKey::where, kCPU, where_kernel);
}

}  // namespace wick::cpu
