#include "core/ops/join.h"

#include "autograd/functions/view.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  check_value(!tensors.empty(), "cat", "expected a non-empty list of tensors");
  for (const Tensor& t : tensors) detail::check_defined("cat", t);
  const Tensor& first = tensors[0];
  check_value(first.dim() > 0, "cat", "zero-dimensional tensors cannot be concatenated");
  int64_t d = wrap_dim("cat", dim, first.dim());
  DType dtype = first.dtype();
  Shape shape = first.shape();
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    detail::check_same_device("cat", first, t);
    check_value(t.dim() == first.dim(), "cat", "tensor ", i, " has ", t.dim(),
                " dimensions but tensor 0 has ", first.dim());
    for (int64_t k = 0; k < t.dim(); ++k) {
      check_value(k == d || t.size(k) == first.size(k), "cat",
                  "sizes must match except in dimension ", d, "; tensor ", i, " has shape ",
                  t.shape(), " and tensor 0 has shape ", first.shape());
    }
    shape[d] = checked_add("cat", shape[d], t.size(d));  // Note [checked sizes]
    dtype = promote_types(dtype, t.dtype());
  }
  checked_nbytes("cat", shape, element_size(dtype));
  Tensor out = empty(shape, options_of(first).with_dtype(dtype));
  int64_t offset = 0;
  std::vector<const Tensor*> inputs;
  bool requires_grad = false;
  for (const Tensor& t : tensors) {
    Tensor destination = detach(out).narrow(d, offset, t.size(d));
    dispatch<CopyKernel>(OpKey::copy, out.device(), t, destination);
    offset += t.size(d);
    inputs.push_back(&t);
    requires_grad = requires_grad || needs_grad(t);
  }
  if (requires_grad) {
    auto node = make_node_for<CatBackward>(inputs);
    node->dim = d;
    set_history(out, node);
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  check_value(!tensors.empty(), "stack", "expected a non-empty list of tensors");
  detail::check_defined("stack", tensors[0]);
  int64_t d = wrap_dim("stack", dim, tensors[0].dim() + 1);
  std::vector<Tensor> expanded;
  for (size_t i = 0; i < tensors.size(); ++i) {
    detail::check_defined("stack", tensors[i]);
    check_value(tensors[i].shape() == tensors[0].shape(), "stack",
                "all tensors must have one shape; tensor ", i, " has shape ", tensors[i].shape(),
                " and tensor 0 has shape ", tensors[0].shape());
    expanded.push_back(tensors[i].unsqueeze(d));
  }
  Shape shape = tensors[0].shape();  // the result's, checked under stack's name
  shape.insert(d, static_cast<int64_t>(tensors.size()));
  checked_nbytes("stack", shape, tensors[0].element_size());
  return cat(expanded, d);
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  detail::check_defined("split", x);
  check_value(split_size > 0, "split", "split_size must be positive; got ", split_size);
  int64_t d = wrap_dim("split", dim, x.dim());
  int64_t size = x.size(d);
  std::vector<Tensor> pieces;
  for (int64_t start = 0; start < size || (size == 0 && pieces.empty()); start += split_size) {
    pieces.push_back(x.narrow(d, start, std::min(split_size, size - start)));
  }
  return pieces;
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  detail::check_defined("chunk", x);
  check_value(chunks > 0, "chunk", "number of chunks must be positive; got ", chunks);
  int64_t size = x.size(dim);
  return split(x, std::max<int64_t>((size + chunks - 1) / chunks, 1), dim);
}

}  // namespace wick
