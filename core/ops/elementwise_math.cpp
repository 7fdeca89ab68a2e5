#include "core/ops/elementwise_math.h"

#include "autograd/functions/elementwise.h"
#include "core/autocast.h"
#include "core/op_table.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

// A binary row of the op table with its backward node: promotion by the row's dtype rule,
// autocast by its policy, and the node saving the inputs and the result.
Tensor run_binary(OpKey key, const Tensor& a_in, const Tensor& b_in) {
  const OpInfo& op = op_info(key);
  detail::check_defined(op.name, a_in);
  detail::check_defined(op.name, b_in);
  Tensor a = autocast::cast(op.autocast, a_in), b = autocast::cast(op.autocast, b_in);
  DType dtype = promote_types(a.dtype(), b.dtype());
  check_type(dtype != kBool, op.name, "not supported for bool tensors");
  if (op.dtype == DTypeRule::PromoteFloating && !is_floating(dtype)) dtype = kFloat32;
  if (!is_floating(dtype) && b.numel() > 0) {
    // An integer kernel cannot raise, so a zero divisor is refused before it runs.
    bool zero = (detail::cast(b, kInt64) == 0).to(kInt64).sum().item<int64_t>() > 0;
    check_state(!zero, op.name, "ZeroDivisionError: integer division by zero");
  }
  Tensor out = detail::binary_forward(key, a, b, dtype, dtype);
  if (needs_grad(a, b)) {
    auto node = make_node<BinaryMathBackward>({&a, &b});
    node->op = key;
    node->a = SavedTensor(a);
    node->b = SavedTensor(b);
    if (key == OpKey::hypot) node->result = SavedTensor(out, /*is_output=*/true);
    set_history(out, node);
  }
  return out;
}

Tensor wrap(const char* op, const Tensor& t, const Scalar& s) {
  detail::check_defined(op, t);
  return detail::wrap_scalar(s, t.dtype(), t.device());
}

Tensor with_attrs(OpKey key, const Tensor& x, const UnaryAttrs& attrs) {
  return unary_op(key, x, attrs);
}

}  // namespace

Tensor remainder(const Tensor& a, const Tensor& b) { return run_binary(OpKey::remainder, a, b); }
Tensor remainder(const Tensor& a, const Scalar& b) { return remainder(a, wrap("remainder", a, b)); }
Tensor fmod(const Tensor& a, const Tensor& b) { return run_binary(OpKey::fmod, a, b); }
Tensor fmod(const Tensor& a, const Scalar& b) { return fmod(a, wrap("fmod", a, b)); }
Tensor atan2(const Tensor& y, const Tensor& x) { return run_binary(OpKey::atan2, y, x); }
Tensor hypot(const Tensor& a, const Tensor& b) { return run_binary(OpKey::hypot, a, b); }
Tensor logaddexp(const Tensor& a, const Tensor& b) { return run_binary(OpKey::logaddexp, a, b); }

Tensor elu(const Tensor& x, double alpha) {
  UnaryAttrs attrs;
  attrs.alpha = alpha;
  return with_attrs(OpKey::elu, x, attrs);
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  check_value(beta != 0.0, "softplus", "beta must be nonzero; got ", beta);
  UnaryAttrs attrs;
  attrs.beta = beta, attrs.threshold = threshold;
  return with_attrs(OpKey::softplus, x, attrs);
}

Tensor mish(const Tensor& x) { return with_attrs(OpKey::mish, x, {}); }

Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  check_value(min_val <= max_val, "hardtanh", "min_val cannot be greater than max_val; got ",
              min_val, " and ", max_val);
  UnaryAttrs attrs;
  attrs.min = min_val, attrs.max = max_val;
  return with_attrs(OpKey::hardtanh, x, attrs);
}

Tensor relu6(const Tensor& x) { return hardtanh(x, 0.0, 6.0); }
Tensor hardswish(const Tensor& x) { return with_attrs(OpKey::hardswish, x, {}); }
Tensor hardsigmoid(const Tensor& x) { return with_attrs(OpKey::hardsigmoid, x, {}); }

}  // namespace wick
