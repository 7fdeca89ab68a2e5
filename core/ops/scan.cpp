#include "core/ops/scan.h"

#include "autograd/functions/reduction.h"
#include "core/grad_mode.h"
#include "core/host_read.h"
#include "core/op_table.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

DType accumulate_dtype(const Tensor& x, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_floating(x.dtype()) ? x.dtype() : kInt64;
}

// x contiguous in `dtype`, as the kernels of this file want it; a 0-d tensor as one element.
Tensor prepared(const Tensor& x, DType dtype) {
  Tensor c = detail::cast(x, dtype);
  return c.dim() == 0 ? c.reshape(Shape{1}) : c.contiguous();
}

Tensor scan(OpKey op, const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  const char* name = op_name(op);
  detail::check_defined(name, x);
  dim = wrap_dim(name, dim, x.dim());
  DType out_dtype = accumulate_dtype(x, dtype);
  Tensor in = prepared(x, out_dtype);
  Tensor out = empty(in.shape(), options_of(in));
  dispatch<ScanKernel>(op, in.device(), in, out, x.dim() == 0 ? 0 : dim);
  if (x.dim() == 0) out = out.reshape(Shape{});
  if (needs_grad(x) && is_floating(out_dtype)) {
    auto node = make_node<ScanBackward>({&x});
    node->op = op;
    node->dim = dim;
    if (op == OpKey::cumprod) {
      node->input = SavedTensor(x);
      node->result = SavedTensor(out, /*is_output=*/true);
    }
    set_history(out, node);
  }
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return scan(OpKey::cumsum, x, dim, dtype);
}

Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  return scan(OpKey::cumprod, x, dim, dtype);
}

Tensor prod(const Tensor& x, std::optional<DType> dtype) {
  detail::check_defined("prod", x);
  if (x.numel() == 0) return ones(Shape{}, options_of(x).with_dtype(accumulate_dtype(x, dtype)));
  return cumprod(x.reshape(Shape{-1}), 0, dtype).select(0, -1);
}

Tensor prod(const Tensor& x, int64_t dim, bool keepdim, std::optional<DType> dtype) {
  detail::check_defined("prod", x);
  dim = wrap_dim("prod", dim, x.dim());
  if (x.dim() == 0) return prod(x, dtype);
  if (x.size(dim) == 0) {
    Shape shape = x.shape();
    shape[dim] = 1;
    Tensor one = ones(shape, options_of(x).with_dtype(accumulate_dtype(x, dtype)));
    return keepdim ? one : one.squeeze(dim);
  }
  Tensor last = cumprod(x, dim, dtype).narrow(dim, x.size(dim) - 1, 1);
  return keepdim ? last : last.squeeze(dim);
}

ValuesIndices sort(const Tensor& x, int64_t dim, bool descending) {
  detail::check_defined("sort", x);
  dim = wrap_dim("sort", dim, x.dim());
  Tensor in = prepared(x, x.dtype());
  Tensor values = empty(in.shape(), options_of(in));
  Tensor indices = empty(in.shape(), options_of(in).with_dtype(kInt64));
  if (in.numel() > 0) {
    dispatch<SortKernel>(OpKey::sort, in.device(), in, values, indices, x.dim() == 0 ? 0 : dim,
                         descending);
  }
  if (x.dim() == 0) values = values.reshape(Shape{}), indices = indices.reshape(Shape{});
  // The gradient of a permutation is the inverse permutation: gather's backward gives it.
  if (needs_grad(x)) values = x.dim() == 0 ? x * 1 : x.gather(dim, indices);
  return {values, indices};
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  NoGradGuard no_grad;
  return sort(x, dim, descending).indices;
}

ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted) {
  detail::check_defined("topk", x);
  dim = wrap_dim("topk", dim, x.dim());
  int64_t length = x.dim() == 0 ? 1 : x.size(dim);
  check_index(k >= 0 && k <= length, "topk", "k (", k, ") is out of range for dimension ", dim,
              " of size ", length);
  (void)sorted;  // always sorted: the k come from a full sort
  Tensor indices;
  {
    NoGradGuard no_grad;
    indices = sort(x, dim, largest).indices;
  }
  if (x.dim() == 0) return {x * 1, indices};
  indices = indices.narrow(dim, 0, k).contiguous();
  return {x.gather(dim, indices), indices};
}

Tensor median(const Tensor& x) {
  detail::check_defined("median", x);
  check_index(x.numel() > 0, "median", "cannot take the median of an empty tensor");
  Tensor flat = x.reshape(Shape{-1});
  Tensor indices;
  {
    NoGradGuard no_grad;
    indices = sort(flat, 0).indices;
  }
  // NaN sorts last, and PyTorch's median of a tensor with a NaN is NaN: take the last then.
  int64_t n = flat.size(0);
  int64_t position = (n - 1) / 2;
  if (is_floating(x.dtype())) {
    NoGradGuard no_grad;
    note_host_read("median of floats (its NaN check)");
    if (isnan(flat).to(kInt64).sum().item<int64_t>() > 0) position = n - 1;
  }
  return flat.gather(0, indices.narrow(0, position, 1)).reshape(Shape{});
}

ValuesIndices median(const Tensor& x, int64_t dim, bool keepdim) {
  detail::check_defined("median", x);
  dim = wrap_dim("median", dim, x.dim());
  if (x.dim() == 0) return {x * 1, zeros(Shape{}, options_of(x).with_dtype(kInt64))};
  int64_t n = x.size(dim);
  check_index(n > 0, "median", "cannot take the median over dimension ", dim, " of size 0");
  Tensor order;
  {
    NoGradGuard no_grad;
    order = sort(x, dim).indices;
  }
  Tensor pick = order.narrow(dim, (n - 1) / 2, 1);
  if (is_floating(x.dtype())) {
    // A line holding NaN has NaN as its median (its NaN sorts last).
    NoGradGuard no_grad;
    Tensor has_nan = any(isnan(x), {dim}, /*keepdim=*/true);
    pick = where(has_nan, order.narrow(dim, n - 1, 1), pick).contiguous();
  }
  Tensor values = x.gather(dim, pick);
  if (!keepdim) return {values.squeeze(dim), pick.squeeze(dim)};
  return {values, pick};
}

}  // namespace wick
