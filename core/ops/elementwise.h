// Elementwise ops: math, activations, comparisons and logic, where, masked_fill, and the C++
// operators. Binary ops broadcast (NumPy rules) and promote dtypes (PyTorch rules); ops defined
// only for floating point (exp, sigmoid, div, ...) turn integer inputs into float32.
#pragma once

#include "core/kernels.h"
#include "core/tensor.h"

namespace wick {

Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, const Scalar& b);
Tensor sub(const Tensor& a, const Scalar& b);
Tensor mul(const Tensor& a, const Scalar& b);
Tensor div(const Tensor& a, const Scalar& b);
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

// Comparisons and logic return bool tensors and have no gradient.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Scalar& b);
Tensor ne(const Tensor& a, const Scalar& b);
Tensor lt(const Tensor& a, const Scalar& b);
Tensor le(const Tensor& a, const Scalar& b);
Tensor gt(const Tensor& a, const Scalar& b);
Tensor ge(const Tensor& a, const Scalar& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);

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
