#include "core/ops/elementwise.h"

#include <limits>
#include <optional>
#include <string>

#include "autograd/functions/elementwise.h"
#include "core/autocast.h"
#include "core/dispatch_observer.h"
#include "core/op_table.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

using detail::binary_forward;
using detail::unary_forward;

namespace {

// The dtype a unary op computes in, by its row's rule (core/op_table.h).
DType unary_dtype(const OpInfo& op, const Tensor& x) {
  switch (op.dtype) {
    case DTypeRule::Floating:
      return is_floating(x.dtype()) ? x.dtype() : kFloat32;
    case DTypeRule::Numeric:
      check_type(x.dtype() != kBool, op.name,
                 op.key == OpKey::neg ? "negating a bool tensor is not supported; use logical_not"
                                      : "not supported for bool tensors");
      return x.dtype();
    default:
      return x.dtype();
  }
}

// Runs a unary op as its row in the op table says: autocast, dtype, kernel, and the backward
// node with what it saves. `dtype` overrides the row's dtype rule (clamp and pow promote with
// their scalar arguments).
Tensor run_unary(OpKey key, const Tensor& x_in, const UnaryAttrs& attrs = {},
                 std::optional<DType> dtype = std::nullopt) {
  const OpInfo& op = op_info(key);
  detail::check_defined(op.name, x_in);
  Tensor x = autocast::cast(op.autocast, x_in);
  DType compute = dtype ? *dtype : unary_dtype(op, x);
  DType out_dtype = op.dtype == DTypeRule::Bool ? kBool : compute;
  Tensor out = unary_forward(key, detail::cast(x, compute), out_dtype, attrs);
  if (op.differentiable && needs_grad(x)) {
    auto node = make_node<UnaryBackward>({&x});
    node->init(op, op.saves == Saves::Output ? out : x, attrs);
    set_history(out, node);
  }
  return out;
}

DType common_dtype(const char* op, const Tensor& a, const Tensor& b) {
  detail::check_defined(op, a);
  detail::check_defined(op, b);
  return promote_types(a.dtype(), b.dtype());
}

Tensor wrap(const Tensor& t, const Scalar& s) {
  detail::check_defined("scalar op", t);
  return detail::wrap_scalar(s, t.dtype(), t.device());
}

// The refusal a binary row names in its check column; `dtype` is the operands' promoted dtype.
void check_operands(const OpInfo& op, const Tensor& a, const Tensor& b, DType dtype) {
  switch (op.check) {
    case BinaryCheck::NoCheck:
      return;
    case BinaryCheck::NotBothBool:
      check_type(!(a.dtype() == kBool && b.dtype() == kBool), op.name,
                 "subtracting two bool tensors is not supported; use logical_xor or logical_not");
      return;
    case BinaryCheck::IntPower:
      if (!is_floating(dtype) && b.numel() > 0 && b.dtype() != kBool) {
        // An integer result has no value for 2 ** -1; PyTorch raises rather than return 0.
        int64_t low = detail::cast(b, kInt64).min().item<int64_t>();
        check_state(low >= 0, op.name, "Integers to negative integer powers are not allowed; got ",
                    "exponent ", low);
      }
      return;
    case BinaryCheck::NotBool:
    case BinaryCheck::IntDivisor:
      check_type(dtype != kBool, op.name, "not supported for bool tensors");
      // A CPU kernel refuses a zero integer divisor itself (Note [integer division by zero] in
      // core/cpu/binary_kernels.cpp); a CUDA kernel cannot raise, so on other devices it is
      // refused here, at the cost of a sync. The check's own ops are no part of the op: a trace
      // does not record them.
      if (op.check == BinaryCheck::IntDivisor && !is_floating(dtype) && !b.device().is_cpu() &&
          a.numel() > 0 && b.numel() > 0) {
        DispatchObserverGuard unobserved(nullptr);
        bool zero = (detail::cast(b, kInt64) == 0).to(kInt64).sum().item<int64_t>() > 0;
        check_state(!zero, op.name, "ZeroDivisionError: integer division by zero");
      }
      return;
  }
}

}  // namespace

// ---- binary math, comparisons and logic: every row of WICK_BINARY_OPS ----

Tensor binary_op(OpKey key, const Tensor& a_in, const Tensor& b_in) {
  const OpInfo& op = op_info(key);
  detail::check_defined(op.name, a_in);
  detail::check_defined(op.name, b_in);
  // Note [fast operator path]: under Keep (add, mul, ...) the operands are used as given, without
  // copying their handles.
  Tensor a_cast, b_cast;
  const Tensor* a = &a_in;
  const Tensor* b = &b_in;
  if (op.autocast != AutocastPolicy::Keep) {
    a_cast = autocast::cast(op.autocast, a_in), b_cast = autocast::cast(op.autocast, b_in);
    a = &a_cast, b = &b_cast;
  }
  DType dtype = promote_types(a->dtype(), b->dtype());
  if (op.check != BinaryCheck::NoCheck) check_operands(op, *a, *b, dtype);
  bool floating_only = op.dtype == DTypeRule::PromoteFloating || op.dtype == DTypeRule::Floating;
  if (floating_only && !is_floating(dtype)) dtype = kFloat32;  // true division, as in PyTorch
  DType out_dtype = op.dtype == DTypeRule::Compare ? kBool : dtype;
  Tensor out = binary_forward(key, *a, *b, dtype, out_dtype);
  if (op.differentiable && needs_grad(*a, *b)) {
    auto node = make_node<BinaryBackward>({a, b});
    node->init(op, *a, *b, out);
    set_history(out, node);
  }
  return out;
}

// The functions of the binary rows, as their api column says (core/ops/op_list.h).
#define WICK_DEFINE_BINARY(name, api, ...)                                \
  WICK_IF_TENSOR_##api(Tensor name(const Tensor& a, const Tensor& b) {    \
    return binary_op(OpKey::name, a, b);                                  \
  }) WICK_IF_SCALAR_##api(Tensor name(const Tensor& a, const Scalar& b) { \
    return binary_op(OpKey::name, a, wrap(a, b));                         \
  })
WICK_BINARY_OPS(WICK_DEFINE_BINARY)
#undef WICK_DEFINE_BINARY

namespace {
OpKey rounding_op(const std::string& mode) {
  check_value(mode.empty() || mode == "trunc" || mode == "floor", "div",
              "expected rounding_mode to be one of None, 'trunc', or 'floor'; got '", mode, "'");
  return mode.empty() ? OpKey::div : mode == "trunc" ? OpKey::div_trunc : OpKey::div_floor;
}
}  // namespace

Tensor div(const Tensor& a, const Tensor& b, const std::string& rounding_mode) {
  return binary_op(rounding_op(rounding_mode), a, b);
}

Tensor div(const Tensor& a, const Scalar& b, const std::string& rounding_mode) {
  return binary_op(rounding_op(rounding_mode), a, wrap(a, b));
}

Tensor pow(const Tensor& a_in, const Scalar& exponent) {
  detail::check_defined("pow", a_in);
  Tensor a = autocast::cast(AutocastPolicy::Float32, a_in);
  check_type(a.dtype() != kBool, "pow", "not supported for bool tensors");
  UnaryAttrs attrs;
  attrs.exponent = exponent.to_double();
  DType out = promote_with_scalar(a.dtype(), exponent.kind());
  check_state(is_floating(out) || exponent.to_double() >= 0, "pow",
              "Integers to negative integer powers are not allowed; got a tensor of dtype ",
              a.dtype(), " and exponent ", exponent.to_int());
  return run_unary(OpKey::pow_scalar, a, attrs, out);
}

// ---- unary math and activations ----

Tensor unary_op(OpKey op, const Tensor& x, const UnaryAttrs& attrs) {
  check_value(op_info(op).family == std::string("unary"), "unary_op", op_name(op),
              " is not a unary op");
  return run_unary(op, x, attrs);
}

// The plain unary ops, one function per row of the op table whose api column is `plain`.
#define WICK_DEFINE_UNARY(name, api, ...) \
  WICK_IF_##api(Tensor name(const Tensor& x) { return run_unary(OpKey::name, x); })
WICK_UNARY_OPS(WICK_DEFINE_UNARY)
#undef WICK_DEFINE_UNARY

Tensor gelu(const Tensor& x, const std::string& approximate) {
  check_value(approximate == "none" || approximate == "tanh", "gelu",
              "approximate must be 'none' or 'tanh'; got '", approximate, "'");
  return run_unary(approximate == "tanh" ? OpKey::gelu_tanh : OpKey::gelu, x);
}

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  UnaryAttrs attrs;
  attrs.negative_slope = negative_slope;
  return run_unary(OpKey::leaky_relu, x, attrs);
}

Tensor clamp(const Tensor& x, const Scalar& min, const Scalar& max) {
  detail::check_defined("clamp", x);
  DType dtype = promote_with_scalar(promote_with_scalar(x.dtype(), min.kind()), max.kind());
  check_type(dtype != kBool, "clamp", "not supported for bool tensors");
  UnaryAttrs attrs;
  attrs.min = min.to_double(), attrs.max = max.to_double();
  return run_unary(OpKey::clamp, x, attrs, dtype);
}

Tensor clamp_min(const Tensor& x, const Scalar& min) {
  return clamp(x, min, std::numeric_limits<double>::infinity());
}

Tensor clamp_max(const Tensor& x, const Scalar& max) {
  return clamp(x, -std::numeric_limits<double>::infinity(), max);
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
