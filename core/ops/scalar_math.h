// The elementwise ops' math, one element at a time, written once for both devices: the CPU
// kernels (core/cpu/unary_kernels.cpp, binary_kernels.cpp) and the CUDA kernels
// (cuda/elementwise.cu) instantiate these same functors over their own loops. Each functor is
// named after its row in core/ops/op_list.h (`exp` -> `exp_fn`) and computes in the compute type
// C: float for Half and BFloat16, the element type otherwise.
//
// Everything here must compile for the host and, under nvcc, for the device: math goes through
// the wick::math overloads below, which call the CUDA math library in device code and <cmath> on
// the host. NVRTC compiles this file too, into the kernels of fused chains (Note [fused chains
// compiled at run time] in jit/fused_cuda.h); it has no standard library, so there the source
// that includes it defines WICK_HOST_DEVICE and UnaryAttrs first, and the traits below are ours.
#pragma once

#ifndef __CUDACC_RTC__
#include <cmath>
#include <type_traits>

#include "core/half.h"
#include "core/kernels.h"
#endif

namespace wick {

namespace math {

#ifdef __CUDA_ARCH__
#define WICK_MATH_UNARY(fn)                                        \
  WICK_HOST_DEVICE inline float fn(float x) { return ::fn##f(x); } \
  WICK_HOST_DEVICE inline double fn(double x) { return ::fn(x); }
#else
#define WICK_MATH_UNARY(fn)                                        \
  WICK_HOST_DEVICE inline float fn(float x) { return std::fn(x); } \
  WICK_HOST_DEVICE inline double fn(double x) { return std::fn(x); }
#endif
WICK_MATH_UNARY(exp)
WICK_MATH_UNARY(expm1)
WICK_MATH_UNARY(log)
WICK_MATH_UNARY(log1p)
WICK_MATH_UNARY(sqrt)
WICK_MATH_UNARY(sin)
WICK_MATH_UNARY(cos)
WICK_MATH_UNARY(tanh)
WICK_MATH_UNARY(erf)
WICK_MATH_UNARY(tan)
WICK_MATH_UNARY(sinh)
WICK_MATH_UNARY(cosh)
WICK_MATH_UNARY(log2)
WICK_MATH_UNARY(log10)
WICK_MATH_UNARY(floor)
WICK_MATH_UNARY(ceil)
WICK_MATH_UNARY(trunc)
WICK_MATH_UNARY(nearbyint)  // round half to even, as torch.round
#undef WICK_MATH_UNARY

#ifdef __CUDA_ARCH__
#define WICK_MATH_BINARY(fn)                                                   \
  WICK_HOST_DEVICE inline float fn(float x, float y) { return ::fn##f(x, y); } \
  WICK_HOST_DEVICE inline double fn(double x, double y) { return ::fn(x, y); }
#else
#define WICK_MATH_BINARY(fn)                                                   \
  WICK_HOST_DEVICE inline float fn(float x, float y) { return std::fn(x, y); } \
  WICK_HOST_DEVICE inline double fn(double x, double y) { return std::fn(x, y); }
#endif
WICK_MATH_BINARY(atan2)
WICK_MATH_BINARY(hypot)
WICK_MATH_BINARY(fmod)
WICK_MATH_BINARY(copysign)
#undef WICK_MATH_BINARY

WICK_HOST_DEVICE inline double pow(double x, double y) {
#ifdef __CUDA_ARCH__
  return ::pow(x, y);
#else
  return std::pow(x, y);
#endif
}

#ifdef __CUDACC_RTC__
// The generated kernels instantiate the functors for float only; these cover the arithmetic types.
template <class C>
constexpr bool is_floating = false;
template <>
constexpr bool is_floating<float> = true;
template <>
constexpr bool is_floating<double> = true;
template <class C>
constexpr bool is_integral = !is_floating<C>;
template <class C>
constexpr bool is_bool = false;
template <>
constexpr bool is_bool<bool> = true;
template <class C>
constexpr bool is_unsigned_or_bool = is_bool<C> || C(-1) > C(0);
#else
template <class C>
constexpr bool is_floating = std::is_floating_point_v<C>;
template <class C>
constexpr bool is_integral = std::is_integral_v<C>;
template <class C>
constexpr bool is_bool = std::is_same_v<C, bool>;
template <class C>
constexpr bool is_unsigned_or_bool = std::is_unsigned_v<C> || std::is_same_v<C, bool>;
#endif

// The unsigned type of a signed integer's width, for arithmetic that wraps around. NVRTC only
// parses it: the chains it compiles are float32 (jit/passes/fuse_elementwise.cpp).
#ifdef __CUDACC_RTC__
template <class C>
using unsigned_t = C;
#else
template <class C>
using unsigned_t = std::make_unsigned_t<C>;
#endif

// Note [integer division]
// C++ leaves an integer x / 0 and x % 0 undefined, and MIN / -1 and MIN % -1 too (the quotient
// -MIN does not fit; x86's idiv traps with SIGFPE, which is how PyTorch 1.13 and 2.x kill the
// process on `torch.tensor([-2**63]) // -1`, for int32 and int64, in //, div(rounding_mode=...),
// % and fmod). The integer quotient and remainder below never do either:
//   - a divisor of -1 negates with two's-complement wrap-around: MIN // -1 is MIN and MIN % -1
//     is 0, what PyTorch gives for int8 (computed in int) and on ARM (no trap);
//   - a zero divisor gives 0, quotient and remainder (NumPy's answer). On the CPU that value is
//     never seen: the kernels of the IntDivisor rows scan the divisor and raise ZeroDivisionError
//     before writing anything (Note [integer division by zero] in core/cpu/binary_kernels.cpp).
//     A CUDA kernel cannot raise: eager GPU ops are checked by their front function, and a
//     compiled graph replayed on a GPU gets the 0s (PyTorch's CUDA result is undefined there).
template <class C>
WICK_HOST_DEVICE inline C int_quotient(C a, C b) {  // truncated, as C's /
  if (b == C(0)) return C(0);
  if constexpr (!is_unsigned_or_bool<C>) {
    if (b == C(-1)) return C(unsigned_t<C>(0) - unsigned_t<C>(a));
  }
  return C(a / b);
}
template <class C>
WICK_HOST_DEVICE inline C int_remainder(C a, C b) {  // truncated: the dividend's sign, as C's %
  if constexpr (!is_unsigned_or_bool<C>) {
    if (b == C(-1)) return C(0);
  }
  return b == C(0) ? C(0) : C(a % b);
}

template <class C>
WICK_HOST_DEVICE inline bool isnan(C x) {
  if constexpr (is_floating<C>) {
    return x != x;
  } else {
    return false;
  }
}

template <class C>
WICK_HOST_DEVICE inline bool isinf(C x) {
  if constexpr (is_floating<C>) {
    return x - x != x - x && x == x;  // inf - inf is NaN; a NaN is not infinite
  } else {
    return false;
  }
}

}  // namespace math

namespace scalar {

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;  // Klambauer et al. 2017
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// A unary functor: `C operator()(C x, const UnaryAttrs&)` (bool for logical_not).
#define WICK_UNARY_FN(name, expr)                                       \
  struct name##_fn {                                                    \
    template <class C>                                                  \
    WICK_HOST_DEVICE C operator()(C x, const UnaryAttrs& attrs) const { \
      (void)attrs;                                                      \
      return expr;                                                      \
    }                                                                   \
  };

WICK_UNARY_FN(neg, C(-x))
WICK_UNARY_FN(square, C(x* x))
WICK_UNARY_FN(exp, math::exp(x))
WICK_UNARY_FN(expm1, math::expm1(x))  // exact near 0, where exp(x) - 1 loses every digit
WICK_UNARY_FN(log, math::log(x))
WICK_UNARY_FN(log1p, math::log1p(x))  // log1p(1e-8f) is 1e-8f; log(1 + 1e-8f) is 0
WICK_UNARY_FN(sqrt, math::sqrt(x))
WICK_UNARY_FN(rsqrt, C(1) / math::sqrt(x))
WICK_UNARY_FN(reciprocal, C(1) / x)
WICK_UNARY_FN(sin, math::sin(x))
WICK_UNARY_FN(cos, math::cos(x))
WICK_UNARY_FN(tanh, math::tanh(x))
WICK_UNARY_FN(erf, math::erf(x))
WICK_UNARY_FN(sigmoid, C(1) / (C(1) + math::exp(-x)))
WICK_UNARY_FN(gelu, C(0.5) * x * (C(1) + math::erf(x * C(kSqrt1_2))))  // x Phi(x)
WICK_UNARY_FN(gelu_tanh,  // PyTorch's approximate='tanh'
              C(0.5) * x * (C(1) + math::tanh(C(kSqrt2OverPi) * (x + C(0.044715) * x * x * x))))
WICK_UNARY_FN(silu, x / (C(1) + math::exp(-x)))
WICK_UNARY_FN(leaky_relu, x < C(0) ? C(x * C(attrs.negative_slope)) : x)
WICK_UNARY_FN(tan, math::tan(x))
WICK_UNARY_FN(sinh, math::sinh(x))
WICK_UNARY_FN(cosh, math::cosh(x))
WICK_UNARY_FN(log2, math::log2(x))
WICK_UNARY_FN(log10, math::log10(x))
WICK_UNARY_FN(elu, x > C(0) ? x : C(C(attrs.alpha) * math::expm1(x)))
WICK_UNARY_FN(selu, C(kSeluScale) * (x > C(0) ? x : C(C(kSeluAlpha) * math::expm1(x))))
// Above the threshold softplus is x to within rounding, and exp would overflow (PyTorch's rule).
WICK_UNARY_FN(softplus, x* C(attrs.beta) > C(attrs.threshold)
                            ? x
                            : C(math::log1p(math::exp(x * C(attrs.beta))) / C(attrs.beta)))
WICK_UNARY_FN(mish, x* math::tanh(x > C(20) ? x : math::log1p(math::exp(x))))
WICK_UNARY_FN(hardtanh, x < C(attrs.min) ? C(attrs.min) : (x > C(attrs.max) ? C(attrs.max) : x))
WICK_UNARY_FN(hardswish, x <= C(-3) ? C(0) : (x >= C(3) ? x : C(x * (x + C(3)) / C(6))))
WICK_UNARY_FN(hardsigmoid, x <= C(-3) ? C(0) : (x >= C(3) ? C(1) : C(x / C(6) + C(0.5))))
#undef WICK_UNARY_FN

// Rounding keeps integers as they are (the Numeric rows accept every dtype but bool).
#define WICK_ROUNDING_FN(name, fn)                                \
  struct name##_fn {                                              \
    template <class C>                                            \
    WICK_HOST_DEVICE C operator()(C x, const UnaryAttrs&) const { \
      if constexpr (math::is_integral<C>) {                       \
        return x;                                                 \
      } else {                                                    \
        return math::fn(x);                                       \
      }                                                           \
    }                                                             \
  };
WICK_ROUNDING_FN(floor, floor)
WICK_ROUNDING_FN(ceil, ceil)
WICK_ROUNDING_FN(trunc, trunc)
WICK_ROUNDING_FN(round, nearbyint)
#undef WICK_ROUNDING_FN

struct sign_fn {  // -1, 0 or 1; 0 for NaN, as PyTorch's sign
  template <class C>
  WICK_HOST_DEVICE C operator()(C x, const UnaryAttrs&) const {
    if constexpr (math::is_unsigned_or_bool<C>) {
      return C(x != C(0));
    } else {
      return C(C(x > C(0)) - C(x < C(0)));
    }
  }
};
struct isnan_fn {
  template <class C>
  WICK_HOST_DEVICE bool operator()(C x, const UnaryAttrs&) const {
    return math::isnan(x);
  }
};
struct isinf_fn {
  template <class C>
  WICK_HOST_DEVICE bool operator()(C x, const UnaryAttrs&) const {
    return math::isinf(x);
  }
};
struct isfinite_fn {
  template <class C>
  WICK_HOST_DEVICE bool operator()(C x, const UnaryAttrs&) const {
    return !math::isnan(x) && !math::isinf(x);
  }
};

struct abs_fn {
  template <class C>
  WICK_HOST_DEVICE C operator()(C x, const UnaryAttrs&) const {
    if constexpr (math::is_unsigned_or_bool<C>) {
      return x;
    } else {
      return x < C(0) ? C(-x) : x;
    }
  }
};
struct relu_fn {  // NaN stays NaN, as in PyTorch
  template <class C>
  WICK_HOST_DEVICE C operator()(C x, const UnaryAttrs&) const {
    if constexpr (math::is_unsigned_or_bool<C>) {
      return x;
    } else {
      return x < C(0) ? C(0) : x;
    }
  }
};
struct clamp_fn {  // min(max(x, lo), hi) as in PyTorch (hi wins if lo > hi); NaN stays NaN
  template <class C>
  WICK_HOST_DEVICE C operator()(C x, const UnaryAttrs& attrs) const {
    double v = static_cast<double>(x);  // bounds may lie outside an integer type's range
    v = v < attrs.min ? attrs.min : v;
    return static_cast<C>(v > attrs.max ? attrs.max : v);
  }
};
struct pow_scalar_fn {
  template <class C>
  WICK_HOST_DEVICE C operator()(C x, const UnaryAttrs& attrs) const {
    if constexpr (math::is_bool<C>) {
      return attrs.exponent == 0.0 || x;
    } else {
      if (attrs.exponent == 2.0) return x * x;  // the common case, exact for integers too
      return static_cast<C>(math::pow(static_cast<double>(x), attrs.exponent));
    }
  }
};
struct logical_not_fn {
  template <class C>
  WICK_HOST_DEVICE bool operator()(C x, const UnaryAttrs&) const {
    return !(x != C(0));
  }
};

// A binary functor: `C operator()(C a, C b)` (bool for comparisons and logic).
#define WICK_BINARY_FN(name, R, expr)               \
  struct name##_fn {                                \
    template <class C>                              \
    WICK_HOST_DEVICE R operator()(C a, C b) const { \
      return expr;                                  \
    }                                               \
  };

WICK_BINARY_FN(add, C, a + b)
WICK_BINARY_FN(sub, C, a - b)
WICK_BINARY_FN(div, C, a / b)
WICK_BINARY_FN(pow, C, static_cast<C>(math::pow(static_cast<double>(a), static_cast<double>(b))))
WICK_BINARY_FN(maximum, C, math::isnan(a) || a > b ? a : b)  // NaN wins, as in PyTorch
WICK_BINARY_FN(minimum, C, math::isnan(a) || a < b ? a : b)
WICK_BINARY_FN(eq, bool, a == b)
WICK_BINARY_FN(ne, bool, a != b)
WICK_BINARY_FN(lt, bool, a < b)
WICK_BINARY_FN(le, bool, a <= b)
WICK_BINARY_FN(gt, bool, a > b)
WICK_BINARY_FN(ge, bool, a >= b)
WICK_BINARY_FN(logical_and, bool, a != C(0) && b != C(0))
WICK_BINARY_FN(logical_or, bool, a != C(0) || b != C(0))
// The activations' derivatives: a is the incoming gradient, b the saved input (or output, for
// relu, sigmoid and tanh, whose derivatives are cheapest in terms of the result).
WICK_BINARY_FN(atan2, C, math::atan2(a, b))
WICK_BINARY_FN(hypot, C, math::hypot(a, b))
WICK_BINARY_FN(relu_backward, C, b > C(0) ? a : C(0))
WICK_BINARY_FN(sigmoid_backward, C, a* b*(C(1) - b))  // y (1 - y)
WICK_BINARY_FN(tanh_backward, C, a*(C(1) - b * b))    // 1 - y^2
#undef WICK_BINARY_FN

struct mul_fn {
  template <class C>
  WICK_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (math::is_bool<C>) {
      return a && b;  // PyTorch: bool * bool is logical and
    } else {
      return a * b;
    }
  }
};
// The quotients and remainders of integers never divide by zero or overflow (Note [integer
// division]); bool never reaches them (the front function refuses it).
struct div_trunc_fn {  // the quotient rounded toward zero: div(a, b, rounding_mode='trunc')
  template <class C>
  WICK_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (math::is_bool<C>) {
      return a;
    } else if constexpr (math::is_integral<C>) {
      return math::int_quotient(a, b);
    } else {
      return math::trunc(a / b);
    }
  }
};
// The quotient rounded toward -inf: a // b, floor_divide, div(a, b, rounding_mode='floor').
// Floating point follows PyTorch's div_floor: floor(a / b) would round a / b first, so 1 // 0.1
// would be 10 (Python says 9.0); (a - fmod(a, b)) / b is exact up to the last step, and a zero
// divisor gives a / b (inf or NaN), as in PyTorch.
struct div_floor_fn {
  template <class C>
  WICK_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (math::is_bool<C>) {
      return a;
    } else if constexpr (math::is_unsigned_or_bool<C>) {
      return math::int_quotient(a, b);
    } else if constexpr (math::is_integral<C>) {
      C q = math::int_quotient(a, b), r = math::int_remainder(a, b);
      return r != C(0) && ((r < C(0)) != (b < C(0))) ? C(q - C(1)) : q;
    } else {
      if (b == C(0)) return a / b;
      C mod = math::fmod(a, b);
      C div = (a - mod) / b;
      if (mod != C(0) && ((b < C(0)) != (mod < C(0)))) div -= C(1);
      if (div == C(0)) return math::copysign(C(0), a / b);
      C floored = math::floor(div);
      return div - floored > C(0.5) ? C(floored + C(1)) : floored;
    }
  }
};
struct fmod_fn {  // the remainder of truncated division: it has the dividend's sign
  template <class C>
  WICK_HOST_DEVICE C operator()(C a, C b) const {
    if constexpr (math::is_bool<C>) {
      return a && !b;
    } else if constexpr (math::is_integral<C>) {
      return math::int_remainder(a, b);
    } else {
      return math::fmod(a, b);
    }
  }
};
struct remainder_fn {  // the remainder of floor division: it has the divisor's sign (Python's %)
  template <class C>
  WICK_HOST_DEVICE C operator()(C a, C b) const {
    C r = fmod_fn()(a, b);
    if constexpr (math::is_unsigned_or_bool<C>) {
      return r;  // no negative operands: floor and truncated division agree
    } else {
      return r != C(0) && ((r < C(0)) != (b < C(0))) ? C(r + b) : r;
    }
  }
};
struct logaddexp_fn {  // log(e^a + e^b) without overflow: max + log1p(e^-|a-b|)
  template <class C>
  WICK_HOST_DEVICE C operator()(C a, C b) const {
    if (math::isinf(a) && a == b) return a;  // -inf - -inf would be NaN
    C hi = a > b ? a : b, diff = a > b ? b - a : a - b;
    return hi + math::log1p(math::exp(diff));
  }
};

struct silu_backward_fn {  // d/dx x s(x) = s(x) (1 + x (1 - s(x)))
  template <class C>
  WICK_HOST_DEVICE C operator()(C g, C x) const {
    C s = C(1) / (C(1) + math::exp(-x));
    return g * s * (C(1) + x * (C(1) - s));
  }
};
struct gelu_backward_fn {  // d/dx x Phi(x) = Phi(x) + x phi(x)
  template <class C>
  WICK_HOST_DEVICE C operator()(C g, C x) const {
    C cdf = C(0.5) * (C(1) + math::erf(x * C(kSqrt1_2)));
    C pdf = C(kInvSqrt2Pi) * math::exp(C(-0.5) * x * x);
    return g * (cdf + x * pdf);
  }
};
struct gelu_tanh_backward_fn {
  template <class C>
  WICK_HOST_DEVICE C operator()(C g, C x) const {
    C inner = C(kSqrt2OverPi) * (x + C(0.044715) * x * x * x);
    C t = math::tanh(inner);
    C dinner = C(kSqrt2OverPi) * (C(1) + C(3 * 0.044715) * x * x);
    return g * (C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * dinner);
  }
};

}  // namespace scalar

}  // namespace wick
