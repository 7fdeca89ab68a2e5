#include "core/ops/elementwise_math.h"

#include "core/op_table.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

Tensor with_attrs(OpKey key, const Tensor& x, const UnaryAttrs& attrs) {
  return unary_op(key, x, attrs);
}

}  // namespace

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
