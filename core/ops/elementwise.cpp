#include "core/ops/elementwise.h"

#include <limits>

#include "autograd/functions/elementwise.h"
#include "core/autocast.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

using detail::binary_forward;
using detail::unary_forward;

namespace {

Tensor float_unary(OpKey op, const Tensor& x, UnaryParams params = {}) {
  detail::check_defined(op_name(op), x);
  DType dtype = is_floating(x.dtype()) ? x.dtype() : kFloat32;
  return unary_forward(op, detail::cast(x, dtype), dtype, params);
}

Tensor numeric_unary(OpKey op, const Tensor& x, UnaryParams params = {}) {
  detail::check_defined(op_name(op), x);
  check_type(x.dtype() != kBool, op_name(op), "not supported for bool tensors");
  return unary_forward(op, x, x.dtype(), params);
}

void record_unary(const Tensor& x, const Tensor& out, const char* name,
                  UnaryBackward::Formula formula, bool save_output, UnaryParams params = {}) {
  if (!needs_grad(x)) return;
  auto node = make_node<UnaryBackward>({&x});
  node->init(name, formula, save_output ? out : x, save_output, params);
  set_history(out, node);
}

DType common_dtype(const char* op, const Tensor& a, const Tensor& b) {
  detail::check_defined(op, a);
  detail::check_defined(op, b);
  return promote_types(a.dtype(), b.dtype());
}

Tensor arithmetic(OpKey op, const Tensor& a, const Tensor& b) {
  DType dtype = common_dtype(op_name(op), a, b);
  return binary_forward(op, a, b, dtype, dtype);
}

Tensor compare(OpKey op, const Tensor& a, const Tensor& b) {
  return binary_forward(op, a, b, common_dtype(op_name(op), a, b), kBool);
}

Tensor wrap(const Tensor& t, const Scalar& s) {
  detail::check_defined("scalar op", t);
  return detail::wrap_scalar(s, t.dtype(), t.device());
}

}  // namespace

// ---- binary arithmetic ----

Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = arithmetic(OpKey::add, a, b);
  if (needs_grad(a, b)) set_history(out, make_node<AddBackward>({&a, &b}));
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b) {
  check_type(!(a.defined() && b.defined() && a.dtype() == kBool && b.dtype() == kBool), "sub",
             "subtracting two bool tensors is not supported; use logical_xor or logical_not");
  Tensor out = arithmetic(OpKey::sub, a, b);
  if (needs_grad(a, b)) set_history(out, make_node<SubBackward>({&a, &b}));
  return out;
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = arithmetic(OpKey::mul, a, b);
  if (needs_grad(a, b)) {
    auto node = make_node<MulBackward>({&a, &b});
    if (b.requires_grad()) node->a = SavedTensor(a);
    if (a.requires_grad()) node->b = SavedTensor(b);
    set_history(out, node);
  }
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  DType dtype = common_dtype("div", a, b);
  if (!is_floating(dtype)) dtype = kFloat32;  // true division, as in PyTorch
  Tensor out = binary_forward(OpKey::div, a, b, dtype, dtype);
  if (needs_grad(a, b)) {
    auto node = make_node<DivBackward>({&a, &b});
    node->b = SavedTensor(b);
    if (b.requires_grad()) node->a = SavedTensor(a);
    set_history(out, node);
  }
  return out;
}

Tensor pow(const Tensor& a_in, const Tensor& exponent_in) {
  Tensor a = autocast::cast(AutocastPolicy::Float32, a_in);
  Tensor exponent = autocast::cast(AutocastPolicy::Float32, exponent_in);
  Tensor out = arithmetic(OpKey::pow, a, exponent);
  if (needs_grad(a, exponent)) {
    auto node = make_node<PowBackward>({&a, &exponent});
    node->base = SavedTensor(a);
    node->exponent = SavedTensor(exponent);
    if (exponent.requires_grad()) node->result = SavedTensor(out, /*is_output=*/true);
    set_history(out, node);
  }
  return out;
}

static Tensor extremum(OpKey op, const Tensor& a, const Tensor& b, bool is_max) {
  Tensor out = arithmetic(op, a, b);
  if (needs_grad(a, b)) {
    auto node = make_node<MaximumBackward>({&a, &b});
    node->a = SavedTensor(a);
    node->b = SavedTensor(b);
    node->is_max = is_max;
    set_history(out, node);
  }
  return out;
}

Tensor maximum(const Tensor& a, const Tensor& b) { return extremum(OpKey::maximum, a, b, true); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extremum(OpKey::minimum, a, b, false); }

Tensor add(const Tensor& a, const Scalar& b) { return add(a, wrap(a, b)); }
Tensor sub(const Tensor& a, const Scalar& b) { return sub(a, wrap(a, b)); }
Tensor mul(const Tensor& a, const Scalar& b) { return mul(a, wrap(a, b)); }
Tensor div(const Tensor& a, const Scalar& b) { return div(a, wrap(a, b)); }

Tensor pow(const Tensor& a_in, const Scalar& exponent) {
  detail::check_defined("pow", a_in);
  Tensor a = autocast::cast(AutocastPolicy::Float32, a_in);
  check_type(a.dtype() != kBool, "pow", "not supported for bool tensors");
  DType dtype = promote_with_scalar(a.dtype(), exponent.kind());
  UnaryParams p{exponent.to_double(), 0};
  Tensor out = unary_forward(OpKey::pow_scalar, detail::cast(a, dtype), dtype, p);
  record_unary(a, out, "PowBackward", pow_scalar_backward, false, p);
  return out;
}

// ---- unary math and activations ----

Tensor neg(const Tensor& x) {
  check_type(!x.defined() || x.dtype() != kBool, "neg",
             "negating a bool tensor is not supported; use logical_not");
  Tensor out = numeric_unary(OpKey::neg, x);
  record_unary(x, out, "NegBackward", neg_backward, false);
  return out;
}

Tensor abs(const Tensor& x) {
  Tensor out = numeric_unary(OpKey::abs, x);
  record_unary(x, out, "AbsBackward", abs_backward, false);
  return out;
}

Tensor exp(const Tensor& x_in) {
  Tensor x = autocast::cast(AutocastPolicy::Float32, x_in);
  Tensor out = float_unary(OpKey::exp, x);
  record_unary(x, out, "ExpBackward", exp_backward, true);
  return out;
}

Tensor log(const Tensor& x_in) {
  Tensor x = autocast::cast(AutocastPolicy::Float32, x_in);
  Tensor out = float_unary(OpKey::log, x);
  record_unary(x, out, "LogBackward", log_backward, false);
  return out;
}

Tensor sqrt(const Tensor& x) {
  Tensor out = float_unary(OpKey::sqrt, x);
  record_unary(x, out, "SqrtBackward", sqrt_backward, true);
  return out;
}

Tensor rsqrt(const Tensor& x_in) {
  Tensor x = autocast::cast(AutocastPolicy::Float32, x_in);
  Tensor out = float_unary(OpKey::rsqrt, x);
  record_unary(x, out, "RsqrtBackward", rsqrt_backward, true);
  return out;
}

Tensor sin(const Tensor& x) {
  Tensor out = float_unary(OpKey::sin, x);
  record_unary(x, out, "SinBackward", sin_backward, false);
  return out;
}

Tensor cos(const Tensor& x) {
  Tensor out = float_unary(OpKey::cos, x);
  record_unary(x, out, "CosBackward", cos_backward, false);
  return out;
}

Tensor tanh(const Tensor& x) {
  Tensor out = float_unary(OpKey::tanh, x);
  record_unary(x, out, "TanhBackward", tanh_backward_formula, true);
  return out;
}

Tensor sigmoid(const Tensor& x) {
  Tensor out = float_unary(OpKey::sigmoid, x);
  record_unary(x, out, "SigmoidBackward", sigmoid_backward_formula, true);
  return out;
}

Tensor relu(const Tensor& x) {
  Tensor out = numeric_unary(OpKey::relu, x);
  record_unary(x, out, "ReluBackward", relu_backward_formula, true);
  return out;
}

Tensor gelu(const Tensor& x, const std::string& approximate) {
  check_value(approximate == "none" || approximate == "tanh", "gelu",
              "approximate must be 'none' or 'tanh'; got '", approximate, "'");
  bool use_tanh = approximate == "tanh";
  UnaryParams p{use_tanh ? 1.0 : 0.0, 0};
  Tensor out = float_unary(use_tanh ? OpKey::gelu_tanh : OpKey::gelu, x);
  record_unary(x, out, "GeluBackward", gelu_backward_formula, false, p);
  return out;
}

Tensor silu(const Tensor& x) {
  Tensor out = float_unary(OpKey::silu, x);
  record_unary(x, out, "SiluBackward", silu_backward_formula, false);
  return out;
}

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  UnaryParams p{negative_slope, 0};
  Tensor out = float_unary(OpKey::leaky_relu, x, p);
  record_unary(x, out, "LeakyReluBackward", leaky_relu_backward, false, p);
  return out;
}

Tensor clamp(const Tensor& x, const Scalar& min, const Scalar& max) {
  detail::check_defined("clamp", x);
  DType dtype = promote_with_scalar(promote_with_scalar(x.dtype(), min.kind()), max.kind());
  check_type(dtype != kBool, "clamp", "not supported for bool tensors");
  UnaryParams p{min.to_double(), max.to_double()};
  Tensor out = unary_forward(OpKey::clamp, detail::cast(x, dtype), dtype, p);
  record_unary(x, out, "ClampBackward", clamp_backward, false, p);
  return out;
}

Tensor clamp_min(const Tensor& x, const Scalar& min) {
  return clamp(x, min, std::numeric_limits<double>::infinity());
}

Tensor clamp_max(const Tensor& x, const Scalar& max) {
  return clamp(x, -std::numeric_limits<double>::infinity(), max);
}

// ---- comparisons and logic ----

Tensor eq(const Tensor& a, const Tensor& b) { return compare(OpKey::eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return compare(OpKey::ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return compare(OpKey::lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return compare(OpKey::le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return compare(OpKey::gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return compare(OpKey::ge, a, b); }
Tensor eq(const Tensor& a, const Scalar& b) { return eq(a, wrap(a, b)); }
Tensor ne(const Tensor& a, const Scalar& b) { return ne(a, wrap(a, b)); }
Tensor lt(const Tensor& a, const Scalar& b) { return lt(a, wrap(a, b)); }
Tensor le(const Tensor& a, const Scalar& b) { return le(a, wrap(a, b)); }
Tensor gt(const Tensor& a, const Scalar& b) { return gt(a, wrap(a, b)); }
Tensor ge(const Tensor& a, const Scalar& b) { return ge(a, wrap(a, b)); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return compare(OpKey::logical_and, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return compare(OpKey::logical_or, a, b); }

Tensor logical_not(const Tensor& x) {
  detail::check_defined("logical_not", x);
  return unary_forward(OpKey::logical_not, x, kBool);
}

// ---- where and masked_fill ----

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  detail::check_defined("where", cond);
  check_type(cond.dtype() == kBool, "where", "condition must be a bool tensor; got ", cond.dtype());
  DType dtype = common_dtype("where", a, b);
  detail::check_same_device("where", cond, a);
  detail::check_same_device("where", a, b);
  Shape shape =
      broadcast_shapes("where", cond.shape(), broadcast_shapes("where", a.shape(), b.shape()));
  Tensor out = empty(shape, options_of(a).with_dtype(dtype));
  dispatch<WhereKernel>(OpKey::where, out.device(), cond, detail::cast(a, dtype),
                        detail::cast(b, dtype), out);
  if (needs_grad(a, b)) {
    auto node = make_node<WhereBackward>({&a, &b});
    node->cond = SavedTensor(cond);
    set_history(out, node);
  }
  return out;
}

Tensor where(const Tensor& cond, const Scalar& a, const Tensor& b) {
  return where(cond, wrap(b, a), b);
}

Tensor where(const Tensor& cond, const Tensor& a, const Scalar& b) {
  return where(cond, a, wrap(a, b));
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  detail::check_defined("masked_fill", x);
  detail::check_defined("masked_fill", mask);
  check_type(mask.dtype() == kBool, "masked_fill", "mask must be a bool tensor; got ",
             mask.dtype());
  check_value(broadcast_shapes("masked_fill", mask.shape(), x.shape()) == x.shape(), "masked_fill",
              "mask of shape ", mask.shape(), " cannot be broadcast to the tensor's shape ",
              x.shape());
  return where(mask, detail::wrap_scalar(value, x.dtype(), x.device()).to(x.dtype()), x);
}

// ---- fused activation backward (called by backward nodes) ----

Tensor relu_backward(const Tensor& grad, const Tensor& result) {
  return binary_forward(OpKey::relu_backward, grad, result, grad.dtype(), grad.dtype());
}
Tensor sigmoid_backward(const Tensor& grad, const Tensor& result) {
  return binary_forward(OpKey::sigmoid_backward, grad, result, grad.dtype(), grad.dtype());
}
Tensor tanh_backward(const Tensor& grad, const Tensor& result) {
  return binary_forward(OpKey::tanh_backward, grad, result, grad.dtype(), grad.dtype());
}
Tensor silu_backward(const Tensor& grad, const Tensor& input) {
  return binary_forward(OpKey::silu_backward, grad, input, grad.dtype(), grad.dtype());
}
Tensor gelu_backward(const Tensor& grad, const Tensor& input, const std::string& approximate) {
  OpKey op = approximate == "tanh" ? OpKey::gelu_tanh_backward : OpKey::gelu_backward;
  return binary_forward(op, grad, input, grad.dtype(), grad.dtype());
}

// ---- operators ----

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(wrap(b, a), b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return sub(wrap(b, a), b); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(wrap(b, a), b); }
Tensor operator/(const Scalar& a, const Tensor& b) { return div(wrap(b, a), b); }
Tensor operator-(const Tensor& x) { return neg(x); }
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }

}  // namespace wick
