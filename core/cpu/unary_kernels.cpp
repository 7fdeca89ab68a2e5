// CPU kernels for unary elementwise ops. Each op is a small functor computing one element in the
// compute type (float for Half and BFloat16); unary_loop applies it over any strides.
#include <cmath>

#include "core/cpu/loops.h"
#include "core/cpu/register.h"

namespace wick::cpu {

namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

struct Neg {
  template <class C>
  C operator()(C x, UnaryParams) const {
    return -x;
  }
};
struct Abs {
  template <class C>
  C operator()(C x, UnaryParams) const {
    return x < C(0) ? C(-x) : x;
  }
};
struct Exp {
  template <class C>
  C operator()(C x, UnaryParams) const {
    return std::exp(x);
  }
};
struct Log {
  template <class C>
  C operator()(C x, UnaryParams) const {
    return std::log(x);
  }
};
struct Sqrt {
  template <class C>
  C operator()(C x, UnaryParams) const {
    return std::sqrt(x);
  }
};
struct Rsqrt {
  template <class C>
  C operator()(C x, UnaryParams) const {
    return C(1) / std::sqrt(x);
  }
};
struct Sin {
  template <class C>
  C operator()(C x, UnaryParams) const {
    return std::sin(x);
  }
};
struct Cos {
  template <class C>
  C operator()(C x, UnaryParams) const {
    return std::cos(x);
  }
};
struct Tanh {
  template <class C>
  C operator()(C x, UnaryParams) const {
    return std::tanh(x);
  }
};
struct Sigmoid {
  template <class C>
  C operator()(C x, UnaryParams) const {
    return C(1) / (C(1) + std::exp(-x));
  }
};
struct Relu {  // NaN stays NaN, as in PyTorch
  template <class C>
  C operator()(C x, UnaryParams) const {
    return x < C(0) ? C(0) : x;
  }
};
struct Gelu {  // x * Phi(x), Phi the standard normal CDF
  template <class C>
  C operator()(C x, UnaryParams) const {
    return C(0.5) * x * (C(1) + std::erf(x * C(kSqrt1_2)));
  }
};
struct GeluTanh {  // the tanh approximation (PyTorch's approximate='tanh')
  template <class C>
  C operator()(C x, UnaryParams) const {
    return C(0.5) * x * (C(1) + std::tanh(C(kSqrt2OverPi) * (x + C(0.044715) * x * x * x)));
  }
};
struct Silu {
  template <class C>
  C operator()(C x, UnaryParams) const {
    return x / (C(1) + std::exp(-x));
  }
};
struct LeakyRelu {
  template <class C>
  C operator()(C x, UnaryParams p) const {
    return x < C(0) ? C(x * C(p.a)) : x;
  }
};
struct Clamp {  // min(max(x, lo), hi) as in PyTorch (hi wins if lo > hi); NaN stays NaN
  template <class C>
  C operator()(C x, UnaryParams p) const {
    double v = static_cast<double>(x);  // bounds may lie outside an integer type's range
    v = v < p.a ? p.a : v;
    return static_cast<C>(v > p.b ? p.b : v);
  }
};
struct PowScalar {
  template <class C>
  C operator()(C x, UnaryParams p) const {
    if constexpr (std::is_same_v<C, bool>) {
      return p.a == 0.0 || x;
    } else {
      if (p.a == 2.0) return x * x;  // the common case, exact for integers too
      return static_cast<C>(std::pow(static_cast<double>(x), p.a));
    }
  }
};

// Ops defined on floating-point tensors only (the front function promotes integers to float32).
template <class Op>
void floating_kernel(const Tensor& in, Tensor& out, UnaryParams params) {
  visit_floating("unary kernel", in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    unary_loop<T, T>(in, out, [params](T x) { return T(Op()(C(x), params)); });
  });
}

// Ops defined on every numeric dtype (bool is rejected by the front function).
template <class Op>
void numeric_kernel(const Tensor& in, Tensor& out, UnaryParams params) {
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    unary_loop<T, T>(in, out, [params](T x) { return T(Op()(C(x), params)); });
  });
}

void logical_not_kernel(const Tensor& in, Tensor& out, UnaryParams) {
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    unary_loop<bool, T>(in, out, [](T x) { return !static_cast<bool>(compute_t<T>(x)); });
  });
}

}  // namespace

void register_unary_kernels(KernelRegistry& r) {
  r.add<UnaryKernel>(OpKey::neg, kCPU, numeric_kernel<Neg>);
  r.add<UnaryKernel>(OpKey::abs, kCPU, numeric_kernel<Abs>);
  r.add<UnaryKernel>(OpKey::relu, kCPU, numeric_kernel<Relu>);
  r.add<UnaryKernel>(OpKey::clamp, kCPU, numeric_kernel<Clamp>);
  r.add<UnaryKernel>(OpKey::pow_scalar, kCPU, numeric_kernel<PowScalar>);
  r.add<UnaryKernel>(OpKey::exp, kCPU, floating_kernel<Exp>);
  r.add<UnaryKernel>(OpKey::log, kCPU, floating_kernel<Log>);
  r.add<UnaryKernel>(OpKey::sqrt, kCPU, floating_kernel<Sqrt>);
  r.add<UnaryKernel>(OpKey::rsqrt, kCPU, floating_kernel<Rsqrt>);
  r.add<UnaryKernel>(OpKey::sin, kCPU, floating_kernel<Sin>);
  r.add<UnaryKernel>(OpKey::cos, kCPU, floating_kernel<Cos>);
  r.add<UnaryKernel>(OpKey::tanh, kCPU, floating_kernel<Tanh>);
  r.add<UnaryKernel>(OpKey::sigmoid, kCPU, floating_kernel<Sigmoid>);
  r.add<UnaryKernel>(OpKey::gelu, kCPU, floating_kernel<Gelu>);
  r.add<UnaryKernel>(OpKey::gelu_tanh, kCPU, floating_kernel<GeluTanh>);
  r.add<UnaryKernel>(OpKey::silu, kCPU, floating_kernel<Silu>);
  r.add<UnaryKernel>(OpKey::leaky_relu, kCPU, floating_kernel<LeakyRelu>);
  r.add<UnaryKernel>(OpKey::logical_not, kCPU, logical_not_kernel);
}

}  // namespace wick::cpu
