// Elementwise ops: math, activations, comparisons and logic, where, masked_fill, and the C++
// operators. Binary ops broadcast (NumPy rules) and promote dtypes (PyTorch rules); ops defined
// only for floating point (exp, sigmoid, div, ...) turn integer inputs into float32.
#pragma once

#include "core/kernels.h"
#include "core/tensor.h"

namespace wick {

// One function per binary op of the op table (core/ops/op_list.h), and for the rows whose api
// column is `number` one taking a Scalar too: add, sub, mul, div, pow, maximum, minimum, the
// comparisons (eq, ne, lt, le, gt, ge: bool results, no gradient), logical_and, logical_or,
// remainder, fmod, div_floor, div_trunc, atan2, hypot and logaddexp (log(e^a + e^b), without
// overflow).
#define WICK_DECLARE_BINARY(name, api, ...)                            \
  WICK_IF_TENSOR_##api(Tensor name(const Tensor& a, const Tensor& b);) \
      WICK_IF_SCALAR_##api(Tensor name(const Tensor& a, const Scalar& b);)
WICK_BINARY_OPS(WICK_DECLARE_BINARY)
#undef WICK_DECLARE_BINARY
// Any binary op of the op table by its key, as its row says: autocast, the row's check,
// promotion, the kernel, and the backward node saving what the gradients read.
Tensor binary_op(OpKey op, const Tensor& a, const Tensor& b);
// torch.div's rounding_mode: "trunc" (div_trunc), "floor" (div_floor) or "" (true division).
Tensor div(const Tensor& a, const Tensor& b, const std::string& rounding_mode);
Tensor div(const Tensor& a, const Scalar& b, const std::string& rounding_mode);
// Python's //: the quotient rounded toward -inf (div_floor). An integer divisor with a zero
// raises ZeroDivisionError; MIN // -1 wraps to MIN (Note [integer division]).
inline Tensor floor_divide(const Tensor& a, const Tensor& b) { return div_floor(a, b); }
inline Tensor floor_divide(const Tensor& a, const Scalar& b) { return div_floor(a, b); }
// A number exponent is the pow_scalar row (a unary op with the exponent as its attribute).
Tensor pow(const Tensor& a, const Scalar& exponent);

// One function per plain unary op of the op table (core/ops/op_list.h): neg, abs, square, exp,
// expm1, log, log1p, sqrt, rsqrt, reciprocal, sin, cos, tanh, sigmoid, relu, silu, logical_not.
#define WICK_DECLARE_UNARY(name, api, ...) WICK_IF_##api(Tensor name(const Tensor& x);)
WICK_UNARY_OPS(WICK_DECLARE_UNARY)
#undef WICK_DECLARE_UNARY
// Any unary op of the op table by its key, with its attributes (the Python binding and the
// table-driven tests call the ops this way).
Tensor unary_op(OpKey op, const Tensor& x, const UnaryAttrs& attrs = {});
// approximate: "none" (x * Phi(x), with erf) or "tanh" (the tanh approximation), as in PyTorch.
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor clamp(const Tensor& x, const Scalar& min, const Scalar& max);
Tensor clamp_min(const Tensor& x, const Scalar& min);
Tensor clamp_max(const Tensor& x, const Scalar& max);

// cond ? a : b elementwise, broadcasting all three; cond must be bool.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b);
// x with `value` wherever mask (bool, broadcastable to x) is true.
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value);

// Fused backward kernels of the activations, used by their backward nodes.
Tensor relu_backward(const Tensor& grad, const Tensor& result);
Tensor sigmoid_backward(const Tensor& grad, const Tensor& result);
Tensor tanh_backward(const Tensor& grad, const Tensor& result);
Tensor silu_backward(const Tensor& grad, const Tensor& input);
Tensor gelu_backward(const Tensor& grad, const Tensor& input, const std::string& approximate);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& x);
// Like LibTorch, comparisons of tensors are tensors (there is no implicit conversion to bool).
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Scalar& b);
Tensor operator<(const Tensor& a, const Scalar& b);
Tensor operator>(const Tensor& a, const Scalar& b);
Tensor operator!=(const Tensor& a, const Scalar& b);
Tensor operator<=(const Tensor& a, const Scalar& b);
Tensor operator>=(const Tensor& a, const Scalar& b);

}  // namespace wick
