#include "core/ops/view.h"

#include <algorithm>
#include <optional>

#include "autograd/functions/view.h"
#include "core/grad_mode.h"
#include "core/op_table.h"
#include "core/ops.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

// A new tensor over x's storage with the given geometry; records `node` as its history.
Tensor make_view(const Tensor& x, const Shape& shape, const Strides& strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>(x.storage(), offset, shape, strides, x.dtype());
  impl->is_view = true;
  return Tensor(std::move(impl));
}

template <class N>
std::shared_ptr<N> record(const Tensor& x, const Tensor& out) {
  if (!needs_grad(x)) return nullptr;
  auto node = make_node<N>({&x});
  set_history(out, node);
  return node;
}

Shape infer_shape(const char* op, const Tensor& x, const Shape& shape) {
  Shape out = shape, given;
  int64_t infer_at = -1;
  for (int64_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      check_value(infer_at < 0, op, "only one dimension can be -1; got shape ", shape);
      infer_at = i;
    } else {
      check_value(shape[i] >= 0, op, "invalid shape dimension ", shape[i], " in shape ", shape);
      given.push_back(shape[i]);
    }
  }
  // Checked (Note [checked sizes]): an overflowing product could wrap to the input's size.
  int64_t known = checked_numel(op, given);
  if (infer_at >= 0) {
    check_value(known != 0 && x.numel() % known == 0, op, "shape ", shape,
                " is invalid for input of size ", x.numel());
    out[infer_at] = x.numel() / known;
  }
  check_value(numel(out) == x.numel(), op, "shape ", shape, " is invalid for input of size ",
              x.numel(), " (shape ", x.shape(), ")");
  return out;
}

// Strides that view x's elements in row-major order with `shape`, if x's layout allows it:
// each group of x's dims that is contiguous in memory must map onto whole dims of `shape`.
// (PyTorch's computeStride.)
std::optional<Strides> view_strides(const Tensor& x, const Shape& shape) {
  if (x.is_contiguous() || x.numel() == 0) return contiguous_strides(shape);
  const Shape& old_shape = x.shape();
  const Strides& old_strides = x.strides();
  Strides strides = Strides::filled(shape.size(), 0);
  int64_t view_d = shape.size() - 1;
  int64_t chunk_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = old_shape.size() - 1; d >= 0; --d) {
    tensor_numel *= old_shape[d];
    bool chunk_ends =
        d == 0 || (old_shape[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_stride);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
      strides[view_d] = view_numel * chunk_stride;
      view_numel *= shape[view_d];
      --view_d;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (d > 0) {
      chunk_stride = old_strides[d - 1];
      tensor_numel = 1;
      view_numel = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

Tensor reshape_view(const Tensor& x, const Shape& shape, const Strides& strides,
                    const char* node_name) {
  Tensor out = make_view(x, shape, strides, x.offset());
  if (auto node = record<ReshapeBackward>(x, out)) node->op_name = node_name;
  return out;
}

Tensor copy_to(const Tensor& x, Device device, DType dtype, const char* node_name) {
  Tensor out = empty(x.shape(), TensorOptions(dtype).with_device(device));
  // The copy kernel of the device that holds the data runs it (a CUDA kernel reads host memory
  // only through explicit transfers, which the CUDA copy kernel performs).
  Device runner = x.device().is_cpu() ? device : x.device();
  dispatch<CopyKernel>(OpKey::copy, runner, x, out);
  if (!is_floating(dtype)) return out;  // integer results carry no gradient
  if (auto node = record<CopyBackward>(x, out)) node->op_name = node_name;
  return out;
}

}  // namespace

Tensor reshape(const Tensor& x, const Shape& shape) {
  detail::check_defined("reshape", x);
  Shape target = infer_shape("reshape", x, shape);
  if (auto strides = view_strides(x, target)) {
    return reshape_view(x, target, *strides, "ReshapeBackward");
  }
  return view(contiguous(x), target);
}

Tensor view(const Tensor& x, const Shape& shape) {
  detail::check_defined("view", x);
  Shape target = infer_shape("view", x, shape);
  auto strides = view_strides(x, target);
  check_value(strides.has_value(), "view", "a tensor of shape ", x.shape(), " and strides ",
              x.strides(), " cannot be viewed as ", target,
              " because its memory is not laid out that way; use reshape(), which copies");
  return reshape_view(x, target, *strides, "ViewBackward");
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  detail::check_defined("flatten", x);
  if (x.dim() == 0) return reshape(x, Shape{1});
  int64_t start = wrap_dim("flatten", start_dim, x.dim());
  int64_t end = wrap_dim("flatten", end_dim, x.dim());
  check_value(start <= end, "flatten", "start_dim ", start_dim, " comes after end_dim ", end_dim);
  Shape shape;
  int64_t merged = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < start || d > end) {
      shape.push_back(x.size(d));
    } else {
      merged *= x.size(d);
      if (d == end) shape.push_back(merged);
    }
  }
  return reshape(x, shape);
}

Tensor permute(const Tensor& x, const DimList& dims) {
  detail::check_defined("permute", x);
  check_value(static_cast<int64_t>(dims.size()) == x.dim(), "permute", "expected ", x.dim(),
              " dims for a tensor of shape ", x.shape(), "; got ", dims.size());
  Shape shape, strides;
  std::vector<bool> seen(x.dim(), false);
  for (int64_t d : dims) {
    int64_t w = wrap_dim("permute", d, x.dim());
    check_value(!seen[w], "permute", "dimension ", d, " is repeated");
    seen[w] = true;
    shape.push_back(x.size(w));
    strides.push_back(x.stride(w));
  }
  Tensor out = make_view(x, shape, strides, x.offset());
  if (auto node = record<PermuteBackward>(x, out)) {
    for (int64_t d : dims) node->dims.push_back(wrap_dim("permute", d, x.dim()));
  }
  return out;
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  detail::check_defined("transpose", x);
  if (x.dim() == 0) return x;
  DimList dims(x.dim());
  for (int64_t d = 0; d < x.dim(); ++d) dims[d] = d;
  std::swap(dims[wrap_dim("transpose", dim0, x.dim())], dims[wrap_dim("transpose", dim1, x.dim())]);
  return permute(x, dims);
}

Tensor squeeze(const Tensor& x) {
  detail::check_defined("squeeze", x);
  Shape shape, strides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (x.size(d) != 1) {
      shape.push_back(x.size(d));
      strides.push_back(x.stride(d));
    }
  }
  return reshape_view(x, shape, strides, "SqueezeBackward");
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  detail::check_defined("squeeze", x);
  int64_t d = wrap_dim("squeeze", dim, x.dim());
  if (x.dim() == 0 || x.size(d) != 1)
    return reshape_view(x, x.shape(), x.strides(), "SqueezeBackward");
  Shape shape = x.shape();
  Strides strides = x.strides();
  shape.erase(d);
  strides.erase(d);
  return reshape_view(x, shape, strides, "SqueezeBackward");
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  detail::check_defined("unsqueeze", x);
  int64_t d = wrap_dim("unsqueeze", dim, x.dim() + 1);
  Shape shape = x.shape();
  Strides strides = x.strides();
  int64_t stride = d < x.dim() ? x.stride(d) * x.size(d) : 1;
  shape.insert(d, 1);
  strides.insert(d, stride);
  return reshape_view(x, shape, strides, "UnsqueezeBackward");
}

Tensor expand(const Tensor& x, const Shape& shape) {
  detail::check_defined("expand", x);
  check_value(shape.size() >= x.dim(), "expand", "the target shape ", shape,
              " has fewer dimensions than the tensor's shape ", x.shape());
  int64_t lead = shape.size() - x.dim();
  Shape out_shape = shape;
  Strides strides = Strides::filled(shape.size(), 0);
  for (int64_t d = 0; d < shape.size(); ++d) {
    if (d < lead) {
      check_value(shape[d] >= 0, "expand", "the new leading dimension ", d,
                  " needs an explicit size; got ", shape[d]);
      continue;  // new leading dims repeat with stride 0
    }
    int64_t have = x.size(d - lead);
    int64_t want = shape[d] == -1 ? have : shape[d];
    check_value(want == have || have == 1, "expand", "cannot expand shape ", x.shape(), " to ",
                shape, ": dimension ", d, " is ", have, " and not 1");
    out_shape[d] = want;
    strides[d] = want == have ? x.stride(d - lead) : 0;
  }
  checked_numel("expand", out_shape);  // Note [checked sizes]
  if (out_shape == x.shape()) return x;
  Tensor out = make_view(x, out_shape, strides, x.offset());
  record<ExpandBackward>(x, out);
  return out;
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  detail::check_defined("slice", x);
  check_value(x.dim() > 0, "slice", "cannot slice a 0-d tensor");
  check_value(step > 0, "slice", "step must be positive; got ", step);
  int64_t d = wrap_dim("slice", dim, x.dim());
  int64_t size = x.size(d);
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  Shape shape = x.shape();
  Strides strides = x.strides();
  // Rounds up without computing end - start + step - 1, which overflows for a huge step.
  shape[d] = (end - start) / step + ((end - start) % step != 0);
  strides[d] = x.stride(d) * step;
  Tensor out = make_view(x, shape, strides, x.offset() + start * x.stride(d));
  if (auto node = record<SliceBackward>(x, out)) {
    node->dim = d;
    node->start = start;
    node->end = end;
    node->step = step;
  }
  return out;
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  detail::check_defined("narrow", x);
  int64_t d = wrap_dim("narrow", dim, x.dim());
  int64_t size = x.dim() == 0 ? 1 : x.size(d);
  check_index(start >= -size && start <= size, "narrow", "start ", start,
              " is out of range for dimension ", d, " of size ", size);
  if (start < 0) start += size;
  // Compared as length <= size - start: start + length overflows for a length near 2**63.
  check_state(length >= 0 && length <= size - start, "narrow", "start (", start, ") + length (",
              length, ") exceeds dimension size (", size, ") of dimension ", d);
  return slice(x, d, start, start + length, 1);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  detail::check_defined("select", x);
  check_index(x.dim() > 0, "select", "cannot index a 0-d tensor");
  int64_t d = wrap_dim("select", dim, x.dim());
  int64_t size = x.size(d);
  check_index(index >= -size && index < size, "select", "index ", index,
              " is out of range for dimension ", d, " with size ", size);
  if (index < 0) index += size;
  Shape shape = x.shape();
  Strides strides = x.strides();
  shape.erase(d);
  strides.erase(d);
  Tensor out = make_view(x, shape, strides, x.offset() + index * x.stride(d));
  if (auto node = record<SelectBackward>(x, out)) {
    node->dim = d;
    node->index = index;
  }
  return out;
}

Tensor as_strided(const Tensor& x, const Shape& shape, const Strides& strides, int64_t offset) {
  detail::check_defined("as_strided", x);
  check_value(shape.size() == strides.size(), "as_strided", "shape ", shape, " and strides ",
              strides, " have different lengths");
  for (int64_t d = 0; d < shape.size(); ++d) {
    check_value(shape[d] >= 0 && strides[d] >= 0, "as_strided",
                "negative sizes and strides are not supported; got shape ", shape, " and strides ",
                strides);
  }
  // Checked (Note [checked sizes]): a stride of 2**62 must not wrap around to element 0.
  int64_t extent = checked_extent("as_strided", shape, strides, offset);
  int64_t storage_elements = static_cast<int64_t>(x.storage()->nbytes() / x.element_size());
  check_index(extent <= storage_elements, "as_strided", "shape ", shape, " with strides ", strides,
              " and offset ", offset, " reaches outside the storage of ", storage_elements,
              " elements");
  check_value(!needs_grad(x) || x.is_contiguous(), "as_strided",
              "autograd through as_strided needs a contiguous input; call contiguous() first");
  Tensor out = make_view(x, shape, strides, offset);
  if (auto node = record<AsStridedBackward>(x, out)) {
    node->shape = shape;
    node->strides = strides;
    node->offset = offset - x.offset();
  }
  return out;
}

Tensor contiguous(const Tensor& x) {
  detail::check_defined("contiguous", x);
  if (x.is_contiguous()) return x;
  checked_nbytes("contiguous", x.shape(), x.element_size());  // a huge expand() cannot be copied
  return copy_to(x, x.device(), x.dtype(), "CloneBackward");
}

Tensor clone(const Tensor& x) {
  detail::check_defined("clone", x);
  return copy_to(x, x.device(), x.dtype(), "CloneBackward");
}

Tensor to(const Tensor& x, Device device, DType dtype) {
  detail::check_defined("to", x);
  if (x.device() == device && x.dtype() == dtype) return x;
  return copy_to(x, device, dtype, op_info(OpKey::copy).backward);
}

Tensor detach(const Tensor& x) {
  detail::check_defined("detach", x);
  return Tensor(
      std::make_shared<TensorImpl>(x.storage(), x.offset(), x.shape(), x.strides(), x.dtype()));
}

}  // namespace wick
