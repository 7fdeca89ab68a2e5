// CUDA kernels for unary and binary elementwise ops, comparisons, where(), and the fused backward
// of the activations. Each op is a small device functor computing one element in the compute type
// (float for Half and BFloat16), the same formula as its CPU twin in core/cpu/unary_kernels.cpp
// and binary_kernels.cpp; launch_elementwise (loops.cuh) applies it over any strides.
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace wick::cuda {

namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

// ---- unary ----

struct Neg {
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    return -x;
  }
};
struct Abs {
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    if constexpr (std::is_unsigned_v<C> || std::is_same_v<C, bool>) {
      return x;
    } else {
      return x < C(0) ? C(-x) : x;
    }
  }
};
struct Exp {
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    return d_exp(x);
  }
};
struct Log {
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    return d_log(x);
  }
};
struct Sqrt {
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    return d_sqrt(x);
  }
};
struct Rsqrt {
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    return C(1) / d_sqrt(x);
  }
};
struct Sin {
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    return d_sin(x);
  }
};
struct Cos {
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    return d_cos(x);
  }
};
struct Tanh {
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    return d_tanh(x);
  }
};
struct Sigmoid {
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    return C(1) / (C(1) + d_exp(-x));
  }
};
struct Relu {  // NaN stays NaN
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    if constexpr (std::is_unsigned_v<C> || std::is_same_v<C, bool>) {
      return x;
    } else {
      return x < C(0) ? C(0) : x;
    }
  }
};
struct Gelu {
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    return C(0.5) * x * (C(1) + d_erf(x * C(kSqrt1_2)));
  }
};
struct GeluTanh {
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    return C(0.5) * x * (C(1) + d_tanh(C(kSqrt2OverPi) * (x + C(0.044715) * x * x * x)));
  }
};
struct Silu {
  template <class C>
  __device__ C operator()(C x, UnaryParams) const {
    return x / (C(1) + d_exp(-x));
  }
};
struct LeakyRelu {
  template <class C>
  __device__ C operator()(C x, UnaryParams p) const {
    return x < C(0) ? C(x * C(p.a)) : x;
  }
};
struct Clamp {
  template <class C>
  __device__ C operator()(C x, UnaryParams p) const {
    double v = static_cast<double>(x);
    v = v < p.a ? p.a : v;
    return static_cast<C>(v > p.b ? p.b : v);
  }
};
struct PowScalar {
  template <class C>
  __device__ C operator()(C x, UnaryParams p) const {
    if constexpr (std::is_same_v<C, bool>) {
      return p.a == 0.0 || x;
    } else {
      if (p.a == 2.0) return x * x;
      return static_cast<C>(pow(static_cast<double>(x), p.a));
    }
  }
};

template <class Op, class T>
struct UnaryFn {
  UnaryParams params;
  __device__ void operator()(char** p) const {
    using C = compute_t<T>;
    *reinterpret_cast<T*>(p[0]) = T(Op()(C(*reinterpret_cast<const T*>(p[1])), params));
  }
};

template <class Op>
void floating_unary(const Tensor& in, Tensor& out, UnaryParams params) {
  visit_floating("unary kernel", in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<2>({&out, &in}, UnaryFn<Op, T>{params});
  });
}

template <class Op>
void numeric_unary(const Tensor& in, Tensor& out, UnaryParams params) {
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<2>({&out, &in}, UnaryFn<Op, T>{params});
  });
}

template <class T>
struct LogicalNotFn {
  __device__ void operator()(char** p) const {
    *reinterpret_cast<bool*>(p[0]) =
        !static_cast<bool>(compute_t<T>(*reinterpret_cast<const T*>(p[1])));
  }
};

void logical_not(const Tensor& in, Tensor& out, UnaryParams) {
  visit_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<2>({&out, &in}, LogicalNotFn<T>{});
  });
}

// ---- binary ----

struct Add {
  template <class C>
  __device__ C operator()(C a, C b) const {
    return a + b;
  }
};
struct Sub {
  template <class C>
  __device__ C operator()(C a, C b) const {
    return a - b;
  }
};
struct Mul {
  template <class C>
  __device__ C operator()(C a, C b) const {
    if constexpr (std::is_same_v<C, bool>) {
      return a && b;
    } else {
      return a * b;
    }
  }
};
struct Div {
  template <class C>
  __device__ C operator()(C a, C b) const {
    return a / b;
  }
};
struct Pow {
  template <class C>
  __device__ C operator()(C a, C b) const {
    return static_cast<C>(pow(static_cast<double>(a), static_cast<double>(b)));
  }
};
struct Maximum {  // NaN wins
  template <class C>
  __device__ C operator()(C a, C b) const {
    return d_isnan(a) || a > b ? a : b;
  }
};
struct Minimum {
  template <class C>
  __device__ C operator()(C a, C b) const {
    return d_isnan(a) || a < b ? a : b;
  }
};
struct Eq {
  template <class C>
  __device__ bool operator()(C a, C b) const {
    return a == b;
  }
};
struct Ne {
  template <class C>
  __device__ bool operator()(C a, C b) const {
    return a != b;
  }
};
struct Lt {
  template <class C>
  __device__ bool operator()(C a, C b) const {
    return a < b;
  }
};
struct Le {
  template <class C>
  __device__ bool operator()(C a, C b) const {
    return a <= b;
  }
};
struct Gt {
  template <class C>
  __device__ bool operator()(C a, C b) const {
    return a > b;
  }
};
struct Ge {
  template <class C>
  __device__ bool operator()(C a, C b) const {
    return a >= b;
  }
};
struct LogicalAnd {
  template <class C>
  __device__ bool operator()(C a, C b) const {
    return a != C(0) && b != C(0);
  }
};
struct LogicalOr {
  template <class C>
  __device__ bool operator()(C a, C b) const {
    return a != C(0) || b != C(0);
  }
};

// Activation backward: a is the incoming gradient, b the saved input (output for sigmoid, tanh).
struct ReluBackward {
  template <class C>
  __device__ C operator()(C g, C x) const {
    return x > C(0) ? g : C(0);
  }
};
struct SigmoidBackward {
  template <class C>
  __device__ C operator()(C g, C y) const {
    return g * y * (C(1) - y);
  }
};
struct TanhBackward {
  template <class C>
  __device__ C operator()(C g, C y) const {
    return g * (C(1) - y * y);
  }
};
struct SiluBackward {
  template <class C>
  __device__ C operator()(C g, C x) const {
    C s = C(1) / (C(1) + d_exp(-x));
    return g * s * (C(1) + x * (C(1) - s));
  }
};
struct GeluBackward {
  template <class C>
  __device__ C operator()(C g, C x) const {
    C cdf = C(0.5) * (C(1) + d_erf(x * C(kSqrt1_2)));
    C pdf = C(kInvSqrt2Pi) * d_exp(C(-0.5) * x * x);
    return g * (cdf + x * pdf);
  }
};
struct GeluTanhBackward {
  template <class C>
  __device__ C operator()(C g, C x) const {
    C inner = C(kSqrt2OverPi) * (x + C(0.044715) * x * x * x);
    C t = d_tanh(inner);
    C dinner = C(kSqrt2OverPi) * (C(1) + C(3 * 0.044715) * x * x);
    return g * (C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * dinner);
  }
};

// Out is T for arithmetic ops and bool for predicates.
template <class Op, class T, class Out>
struct BinaryFn {
  __device__ void operator()(char** p) const {
    using C = compute_t<T>;
    C a = C(*reinterpret_cast<const T*>(p[1]));
    C b = C(*reinterpret_cast<const T*>(p[2]));
    *reinterpret_cast<Out*>(p[0]) = Out(Op()(a, b));
  }
};

template <class Op>
void arithmetic(const Tensor& a, const Tensor& b, Tensor& out) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<3>({&out, &a, &b}, BinaryFn<Op, T, T>{});
  });
}

template <class Op>
void floating_binary(const Tensor& a, const Tensor& b, Tensor& out) {
  visit_floating("binary kernel", a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<3>({&out, &a, &b}, BinaryFn<Op, T, T>{});
  });
}

template <class Op>
void predicate(const Tensor& a, const Tensor& b, Tensor& out) {
  visit_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elementwise<3>({&out, &a, &b}, BinaryFn<Op, T, bool>{});
  });
}

// where only moves elements, so it is typed by element size.
template <class S>
struct WhereFn {
  __device__ void operator()(char** p) const {
    bool c = *reinterpret_cast<const bool*>(p[1]);
    *reinterpret_cast<S*>(p[0]) = *reinterpret_cast<const S*>(p[c ? 2 : 3]);
  }
};

void where(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  visit_size(a.dtype(), [&](auto tag) {
    using S = typename decltype(tag)::type;
    launch_elementwise<4>({&out, &cond, &a, &b}, WhereFn<S>{});
  });
}

}  // namespace

void register_elementwise_kernels(KernelRegistry& r) {
  r.add<UnaryKernel>(OpKey::neg, kCUDA, numeric_unary<Neg>);
  r.add<UnaryKernel>(OpKey::abs, kCUDA, numeric_unary<Abs>);
  r.add<UnaryKernel>(OpKey::relu, kCUDA, numeric_unary<Relu>);
  r.add<UnaryKernel>(OpKey::clamp, kCUDA, numeric_unary<Clamp>);
  r.add<UnaryKernel>(OpKey::pow_scalar, kCUDA, numeric_unary<PowScalar>);
  r.add<UnaryKernel>(OpKey::exp, kCUDA, floating_unary<Exp>);
  r.add<UnaryKernel>(OpKey::log, kCUDA, floating_unary<Log>);
  r.add<UnaryKernel>(OpKey::sqrt, kCUDA, floating_unary<Sqrt>);
  r.add<UnaryKernel>(OpKey::rsqrt, kCUDA, floating_unary<Rsqrt>);
  r.add<UnaryKernel>(OpKey::sin, kCUDA, floating_unary<Sin>);
  r.add<UnaryKernel>(OpKey::cos, kCUDA, floating_unary<Cos>);
  r.add<UnaryKernel>(OpKey::tanh, kCUDA, floating_unary<Tanh>);
  r.add<UnaryKernel>(OpKey::sigmoid, kCUDA, floating_unary<Sigmoid>);
  r.add<UnaryKernel>(OpKey::gelu, kCUDA, floating_unary<Gelu>);
  r.add<UnaryKernel>(OpKey::gelu_tanh, kCUDA, floating_unary<GeluTanh>);
  r.add<UnaryKernel>(OpKey::silu, kCUDA, floating_unary<Silu>);
  r.add<UnaryKernel>(OpKey::leaky_relu, kCUDA, floating_unary<LeakyRelu>);
  r.add<UnaryKernel>(OpKey::logical_not, kCUDA, logical_not);

  r.add<BinaryKernel>(OpKey::add, kCUDA, arithmetic<Add>);
  r.add<BinaryKernel>(OpKey::sub, kCUDA, arithmetic<Sub>);
  r.add<BinaryKernel>(OpKey::mul, kCUDA, arithmetic<Mul>);
  r.add<BinaryKernel>(OpKey::div, kCUDA, floating_binary<Div>);
  r.add<BinaryKernel>(OpKey::pow, kCUDA, arithmetic<Pow>);
  r.add<BinaryKernel>(OpKey::maximum, kCUDA, arithmetic<Maximum>);
  r.add<BinaryKernel>(OpKey::minimum, kCUDA, arithmetic<Minimum>);
  r.add<BinaryKernel>(OpKey::eq, kCUDA, predicate<Eq>);
  r.add<BinaryKernel>(OpKey::ne, kCUDA, predicate<Ne>);
  r.add<BinaryKernel>(OpKey::lt, kCUDA, predicate<Lt>);
  r.add<BinaryKernel>(OpKey::le, kCUDA, predicate<Le>);
  r.add<BinaryKernel>(OpKey::gt, kCUDA, predicate<Gt>);
  r.add<BinaryKernel>(OpKey::ge, kCUDA, predicate<Ge>);
  r.add<BinaryKernel>(OpKey::logical_and, kCUDA, predicate<LogicalAnd>);
  r.add<BinaryKernel>(OpKey::logical_or, kCUDA, predicate<LogicalOr>);
  r.add<BinaryKernel>(OpKey::relu_backward, kCUDA, floating_binary<ReluBackward>);
  r.add<BinaryKernel>(OpKey::sigmoid_backward, kCUDA, floating_binary<SigmoidBackward>);
  r.add<BinaryKernel>(OpKey::tanh_backward, kCUDA, floating_binary<TanhBackward>);
  r.add<BinaryKernel>(OpKey::silu_backward, kCUDA, floating_binary<SiluBackward>);
  r.add<BinaryKernel>(OpKey::gelu_backward, kCUDA, floating_binary<GeluBackward>);
  r.add<BinaryKernel>(OpKey::gelu_tanh_backward, kCUDA, floating_binary<GeluTanhBackward>);
  r.add<WhereKernel>(OpKey::where, kCUDA, where);
}

}  // namespace wick::cuda
