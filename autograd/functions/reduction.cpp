#include "autograd/functions/reduction.h"

#include "core/grad_mode.h"
#include "core/host_read.h"
#include "core/ops.h"

namespace wick {

Shape keepdim_shape(const Shape& input, const DimVec& dims) {
  Shape shape = input;
  for (int64_t d : dims) shape[d] = 1;
  return shape;
}

TensorList SumBackward::apply(const Tensor& grad) {
  const Shape& input = input_meta[0].shape;
  Tensor g = grad.reshape(keepdim_shape(input, dims)).expand(input);
  return {scale == 1.0 ? g : g * scale};
}

TensorList MaxDimBackward::apply(const Tensor& grad) {
  const Shape& input = input_meta[0].shape;
  Tensor idx = indices.unpack(*this);
  Tensor g = keepdim ? grad : grad.unsqueeze(dim);
  return {zeros(input, options_of(grad)).scatter_add(dim, idx, g)};
}

TensorList MaxAllBackward::apply(const Tensor& grad) {
  Tensor x = input.unpack(*this), y = result.unpack(*this);
  Tensor mask = (x == y).to(grad.dtype());
  return {mask * (grad / mask.sum())};
}

TensorList AmaxBackward::apply(const Tensor& grad) {
  Tensor x = input.unpack(*this), y = result.unpack(*this);
  Tensor g = grad.reshape(y.shape());
  Tensor mask = (x == y).to(grad.dtype());
  return {mask * (g / sum(mask, dims.vec(), /*keepdim=*/true))};
}

TensorList Norm2Backward::apply(const Tensor& grad) {
  Tensor x = input.unpack(*this), y = result.unpack(*this);
  // The saved norm has no history (the output is its reshape); recompute it for create_graph.
  if (GradMode::is_enabled()) y = sqrt(sum(x * x, dims.vec(), /*keepdim=*/true));
  Tensor scale = grad.reshape(y.shape()) / y;
  return {x * masked_fill(scale, y == 0, 0.0)};
}

namespace {

// sum_{j >= k} g_j along dim, without a flip: the total minus the sum before k.
Tensor reverse_cumsum(const Tensor& g, int64_t dim) {
  return g.sum({dim}, /*keepdim=*/true) - cumsum(g, dim) + g;
}

}  // namespace

TensorList ScanBackward::apply(const Tensor& grad) {
  if (op == OpKey::cumsum) return {reverse_cumsum(grad, dim)};
  Tensor x = input.unpack(*this), y = result.unpack(*this);
  if (x.dim() == 0) return {grad};
  bool has_zero;
  {
    NoGradGuard no_grad;
    note_host_read("prod's backward (its check for zeros)");  // Note [host reads]
    has_zero = (x == 0).to(kInt64).sum().item<int64_t>() > 0;
  }
  // Without zeros, d y_j / d x_k = y_j / x_k: one reversed cumsum.
  if (!has_zero) return {reverse_cumsum(grad * y, dim) / x};
  // With zeros the division is undefined; build each position's gradient from the products
  // with x_k replaced by 1 (O(n) ops of the whole tensor: only taken when a zero is there).
  int64_t n = x.size(dim);
  TensorList parts;
  for (int64_t k = 0; k < n; ++k) {
    Tensor unit = ones_like(x.narrow(dim, k, 1));
    TensorList pieces = {x.narrow(dim, 0, k), unit, x.narrow(dim, k + 1, n - k - 1)};
    Tensor without_k = cumprod(cat(pieces, dim), dim).narrow(dim, k, n - k);
    parts.push_back((grad.narrow(dim, k, n - k) * without_k).sum({dim}, /*keepdim=*/true));
  }
  return {cat(parts, dim)};
}

}  // namespace wick
