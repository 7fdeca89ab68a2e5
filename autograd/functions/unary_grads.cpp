#include "autograd/functions/unary_grads.h"

#include "core/grad_mode.h"
#include "core/ops.h"

namespace wick {

namespace {
// 1 where mask is true, else 0, in the dtype of `like`.
Tensor as_mask(const Tensor& mask, const Tensor& like) { return mask.to(like.dtype()); }
}  // namespace

Tensor neg_grad(const Tensor& grad, const Tensor&, const UnaryAttrs&) { return -grad; }

Tensor abs_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  return grad * (as_mask(x > 0, grad) - as_mask(x < 0, grad));
}

Tensor square_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  return grad * x * 2.0;
}

Tensor exp_grad(const Tensor& grad, const Tensor& y, const UnaryAttrs&) { return grad * y; }

Tensor expm1_grad(const Tensor& grad, const Tensor& y, const UnaryAttrs&) {
  return grad * (y + 1.0);  // d/dx (e^x - 1) = e^x = y + 1
}

Tensor log_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) { return grad / x; }

Tensor log1p_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  return grad / (x + 1.0);
}

Tensor sqrt_grad(const Tensor& grad, const Tensor& y, const UnaryAttrs&) {
  return grad / (y * 2.0);
}

Tensor rsqrt_grad(const Tensor& grad, const Tensor& y, const UnaryAttrs&) {
  return grad * y * y * y * -0.5;  // d/dx x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3
}

Tensor reciprocal_grad(const Tensor& grad, const Tensor& y, const UnaryAttrs&) {
  return -(grad * y * y);  // d/dx 1/x = -1/x^2 = -y^2
}

Tensor sin_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) { return grad * cos(x); }

Tensor cos_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) { return -(grad * sin(x)); }

Tensor erf_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  return grad * exp(-(x * x)) * 1.1283791670955126;  // d/dx erf(x) = 2/sqrt(pi) e^(-x^2)
}

Tensor tan_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  Tensor t = tan(x);
  return grad * (t * t + 1.0);  // 1 + tan^2
}

Tensor sinh_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) { return grad * cosh(x); }

Tensor cosh_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) { return grad * sinh(x); }

Tensor log2_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  return grad / (x * 0.69314718055994530942);  // ln 2
}

Tensor log10_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  return grad / (x * 2.30258509299404568402);  // ln 10
}

// Step functions: zero almost everywhere, and PyTorch defines it as zero everywhere.
Tensor floor_grad(const Tensor& grad, const Tensor&, const UnaryAttrs&) { return zeros_like(grad); }
Tensor ceil_grad(const Tensor& grad, const Tensor&, const UnaryAttrs&) { return zeros_like(grad); }
Tensor trunc_grad(const Tensor& grad, const Tensor&, const UnaryAttrs&) { return zeros_like(grad); }
Tensor round_grad(const Tensor& grad, const Tensor&, const UnaryAttrs&) { return zeros_like(grad); }
Tensor sign_grad(const Tensor& grad, const Tensor&, const UnaryAttrs&) { return zeros_like(grad); }

Tensor elu_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs& attrs) {
  return where(x > 0, grad, grad * exp(x) * attrs.alpha);
}

Tensor selu_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  constexpr double kAlpha = 1.6732632423543772848, kScale = 1.0507009873554804934;
  return where(x > 0, grad * kScale, grad * exp(x) * (kAlpha * kScale));
}

Tensor softplus_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs& attrs) {
  // d/dx log(1 + e^(beta x)) / beta = sigmoid(beta x); 1 above the threshold, where it is x
  return where(x * attrs.beta > attrs.threshold, grad, grad * sigmoid(x * attrs.beta));
}

Tensor mish_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  // d/dx x tanh(sp(x)) = tanh(sp) + x (1 - tanh^2(sp)) sigmoid(x), with sp = softplus
  UnaryAttrs sp;
  Tensor t = tanh(unary_op(OpKey::softplus, x, sp));
  return grad * (t + x * (1.0 - t * t) * sigmoid(x));
}

Tensor hardtanh_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs& attrs) {
  // Unlike clamp, nothing passes at the bounds themselves (PyTorch's hardtanh_backward).
  return where(logical_and(x > attrs.min, x < attrs.max), grad, zeros_like(grad));
}

Tensor hardswish_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  // 0 below -3, 1 above 3, (2x + 3) / 6 between (PyTorch's boundaries: x < -3, x <= 3).
  Tensor middle = grad * (x * (2.0 / 6.0) + 0.5);
  return where(x < -3.0, zeros_like(grad), where(x <= 3.0, middle, grad));
}

Tensor hardsigmoid_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  return where(logical_and(x > -3.0, x < 3.0), grad * (1.0 / 6.0), zeros_like(grad));
}

// The activations' derivatives are fused kernels: one pass instead of three or four ops. A
// create_graph backward (grad mode on) needs the derivative's own graph, so there they are
// written with differentiable ops instead (Note [higher-order gradients] in engine.cpp).
namespace {
bool recording() { return GradMode::is_enabled(); }
constexpr double kInvSqrt2 = 0.70710678118654752;
constexpr double kInvSqrt2Pi = 0.39894228040143268;  // 1 / sqrt(2 pi)
constexpr double kSqrt2OverPi = 0.79788456080286536;
constexpr double kGeluTanhCubic = 0.044715;
}  // namespace

Tensor tanh_grad(const Tensor& grad, const Tensor& y, const UnaryAttrs&) {
  if (recording()) return grad * (1.0 - y * y);
  return tanh_backward(grad, y);
}

Tensor sigmoid_grad(const Tensor& grad, const Tensor& y, const UnaryAttrs&) {
  if (recording()) return grad * y * (1.0 - y);
  return sigmoid_backward(grad, y);
}

Tensor relu_grad(const Tensor& grad, const Tensor& y, const UnaryAttrs&) {
  if (recording()) return where(y > 0, grad, zeros_like(grad));
  return relu_backward(grad, y);
}

Tensor gelu_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  // d/dx x Phi(x) = Phi(x) + x phi(x)
  if (recording()) {
    Tensor cdf = (erf(x * kInvSqrt2) + 1.0) * 0.5;
    Tensor pdf = exp(x * x * -0.5) * kInvSqrt2Pi;
    return grad * (cdf + x * pdf);
  }
  return gelu_backward(grad, x, "none");
}

Tensor gelu_tanh_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  // With u = sqrt(2/pi) (x + 0.044715 x^3): d/dx x (1 + tanh u) / 2
  //   = (1 + tanh u) / 2 + x (1 - tanh^2 u) u' / 2
  if (recording()) {
    Tensor t = tanh((x + x * x * x * kGeluTanhCubic) * kSqrt2OverPi);
    Tensor du = (x * x * (3 * kGeluTanhCubic) + 1.0) * kSqrt2OverPi;
    return grad * ((t + 1.0) * 0.5 + x * (1.0 - t * t) * du * 0.5);
  }
  return gelu_backward(grad, x, "tanh");
}

Tensor silu_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs&) {
  // d/dx x s(x) = s (1 + x (1 - s))
  if (recording()) {
    Tensor s = sigmoid(x);
    return grad * s * (x * (1.0 - s) + 1.0);
  }
  return silu_backward(grad, x);
}

Tensor leaky_relu_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs& attrs) {
  return where(x > 0, grad, grad * attrs.negative_slope);
}

Tensor clamp_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs& attrs) {
  // The gradient passes where min <= x <= max (PyTorch's convention at the bounds).
  return where(logical_and(x >= attrs.min, x <= attrs.max), grad, zeros_like(grad));
}

Tensor pow_scalar_grad(const Tensor& grad, const Tensor& x, const UnaryAttrs& attrs) {
  if (attrs.exponent == 0.0) return zeros_like(grad);
  return grad * pow(x, attrs.exponent - 1.0) * attrs.exponent;
}

}  // namespace wick
