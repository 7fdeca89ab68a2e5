#include "core/ops/linalg.h"

#include "core/autocast.h"

#include "autograd/functions/linalg.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

// Each matrix of the batch stored column by column, as weight.t() is; see Note [gradients in
// their input's layout].
bool column_major(const Tensor& t) {
  return t.size(1) > 1 && t.size(2) > 1 && t.stride(1) == 1 && t.stride(2) == t.size(1);
}

}  // namespace

Tensor bmm(const Tensor& a_in, const Tensor& b_in) {
  detail::check_defined("bmm", a_in);
  detail::check_defined("bmm", b_in);
  Tensor a = autocast::cast(AutocastPolicy::LowerPrecision, a_in);
  Tensor b = autocast::cast(AutocastPolicy::LowerPrecision, b_in);
  check_value(a.dim() == 3 && b.dim() == 3, "bmm", "expected 3-D tensors; got shapes ", a.shape(),
              " and ", b.shape());
  check_value(a.size(0) == b.size(0), "bmm", "batch sizes differ: ", a.shape(), " @ ", b.shape());
  check_value(a.size(2) == b.size(1), "bmm", "inner dimensions differ: ", a.shape(), " @ ",
              b.shape());
  check_type(a.dtype() == b.dtype(), "bmm", "expected both operands to have one dtype; got ",
             a.dtype(), " and ", b.dtype());
  check_type(a.dtype() != kBool, "bmm", "not supported for bool tensors");
  detail::check_same_device("bmm", a, b);
  Shape shape{a.size(0), a.size(1), b.size(2)};
  // An empty inner dimension is a sum of nothing: zeros, without calling a GEMM with k == 0.
  Tensor out = a.size(2) == 0 ? zeros(shape, options_of(a)) : empty(shape, options_of(a));
  if (a.size(2) > 0 && out.numel() > 0) dispatch<BmmKernel>(OpKey::bmm, a.device(), a, b, out);
  if (needs_grad(a, b)) {
    auto node = make_node<BmmBackward>({&a, &b});
    if (b.requires_grad()) node->a = SavedTensor(a);
    if (a.requires_grad()) node->b = SavedTensor(b);
    node->a_column_major = column_major(a);
    node->b_column_major = column_major(b);
    set_history(out, node);
  }
  return out;
}

Tensor mm(const Tensor& a, const Tensor& b) {
  detail::check_defined("mm", a);
  detail::check_defined("mm", b);
  check_value(a.dim() == 2 && b.dim() == 2, "mm", "both operands must be 2-D; got shapes ",
              a.shape(), " and ", b.shape());
  check_value(a.size(1) == b.size(0), "mm", "inner dimensions differ: ", a.shape(), " @ ",
              b.shape());
  return matmul(a, b);
}

Tensor matmul(const Tensor& a_in, const Tensor& b_in) {
  detail::check_defined("matmul", a_in);
  detail::check_defined("matmul", b_in);
  Tensor a = autocast::cast(AutocastPolicy::LowerPrecision, a_in);
  Tensor b = autocast::cast(AutocastPolicy::LowerPrecision, b_in);
  check_value(a.dim() >= 1 && b.dim() >= 1, "matmul",
              "both arguments need at least one dimension; got shapes ", a.shape(), " and ",
              b.shape());
  int64_t a_inner = a.size(-1);
  int64_t b_inner = b.dim() == 1 ? b.size(0) : b.size(-2);
  check_value(a_inner == b_inner, "matmul", "inner dimensions differ: ", a.shape(), " @ ",
              b.shape());
  check_type(a.dtype() == b.dtype(), "matmul", "expected both operands to have one dtype; got ",
             a.dtype(), " and ", b.dtype());

  // Promote vectors to matrices; the extra dims are removed from the result.
  Tensor lhs = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor rhs = b.dim() == 1 ? b.unsqueeze(1) : b;
  int64_t n = lhs.size(-2), m = lhs.size(-1), p = rhs.size(-1);
  Tensor out;
  if (rhs.dim() == 2) {
    // A batch of rows times one matrix is one big matrix product: fold the batch into the rows.
    Shape batch(lhs.shape().data(), lhs.dim() - 2);
    // Explicit sizes, not -1: with m == 0 a -1 would be ambiguous, and (2, 0) @ (0, 4) is a valid
    // product (zeros of shape (2, 4)).
    Tensor rows = lhs.reshape(Shape{numel(batch) * n, m});
    Tensor product = bmm(rows.unsqueeze(0), rhs.unsqueeze(0)).squeeze(0);
    Shape out_shape = batch;
    out_shape.push_back(n);
    out_shape.push_back(p);
    out = product.reshape(out_shape);
  } else {
    Shape lhs_batch(lhs.shape().data(), lhs.dim() - 2);
    Shape rhs_batch(rhs.shape().data(), rhs.dim() - 2);
    Shape batch = broadcast_shapes("matmul", lhs_batch, rhs_batch);
    Shape lhs_shape = batch, rhs_shape = batch, out_shape = batch;
    lhs_shape.push_back(n), lhs_shape.push_back(m);
    rhs_shape.push_back(m), rhs_shape.push_back(p);
    out_shape.push_back(n), out_shape.push_back(p);
    Tensor l = lhs.expand(lhs_shape).reshape(Shape{numel(batch), n, m});
    Tensor r = rhs.expand(rhs_shape).reshape(Shape{numel(batch), m, p});
    out = bmm(l, r).reshape(out_shape);
  }
  if (b.dim() == 1) out = out.squeeze(-1);
  if (a.dim() == 1) out = out.squeeze(b.dim() == 1 ? -1 : -2);
  return out;
}

Tensor linear(const Tensor& x_in, const Tensor& weight_in, const Tensor& bias_in) {
  detail::check_defined("linear", x_in);
  detail::check_defined("linear", weight_in);
  Tensor x = autocast::cast(AutocastPolicy::LowerPrecision, x_in);
  Tensor weight = autocast::cast(AutocastPolicy::LowerPrecision, weight_in);
  Tensor bias = autocast::cast(AutocastPolicy::LowerPrecision, bias_in);
  check_value(weight.dim() == 2, "linear", "weight must be 2-D [out_features, in_features]; got ",
              weight.shape());
  check_value(x.dim() >= 1 && x.size(-1) == weight.size(1), "linear", "input of shape ", x.shape(),
              " does not match weight of shape ", weight.shape(), " (expected last dimension ",
              weight.size(1), ")");
  Tensor out = matmul(x, weight.t());
  if (bias.defined()) {
    check_value(bias.dim() == 1 && bias.size(0) == weight.size(0), "linear", "bias of shape ",
                bias.shape(), " does not match weight of shape ", weight.shape());
    out = out + bias;
  }
  return out;
}

}  // namespace wick
