#include "core/ops/op_utils.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "core/memory/history.h"
#include "core/ops.h"

namespace wick::detail {

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  check_value(a.device() == b.device(), op, "expected all tensors on one device; got ", a.device(),
              " and ", b.device());
}

Tensor empty_for(const char* op, const Shape& shape, const TensorOptions& options) {
  checked_nbytes(op, shape, element_size(options.dtype.value_or(get_default_dtype())));
  return empty(shape, options);
}

Tensor cast(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = empty(t.shape(), options_of(t).with_dtype(dtype));
  dispatch<CopyKernel>(OpKey::copy, t.device(), t, out);
  return out;
}

Tensor wrap_scalar(const Scalar& value, DType other, Device device) {
  DType dtype = promote_with_scalar(other, value.kind());
  // A float scalar next to a float16 tensor stays float16, next to an integer tensor it becomes
  // float32; an integer scalar takes the tensor's dtype.
  return full(Shape{}, value, TensorOptions(dtype).with_device(device));
}

// The elementwise ops allocate here, so C++ callers get an owner in memory history even
// without the Python binding's (Note [memory history]).
Tensor unary_forward(OpKey op, const Tensor& x, DType out_dtype, const UnaryAttrs& attrs) {
  memory::OwnerScope owner(op_name(op));
  Tensor out = empty(x.shape(), options_of(x).with_dtype(out_dtype));
  dispatch<UnaryKernel>(op, x.device(), x, out, attrs);
  return out;
}

Tensor binary_forward(OpKey op, const Tensor& a, const Tensor& b, DType compute_dtype,
                      DType out_dtype) {
  memory::OwnerScope owner(op_name(op));
  check_same_device(op_name(op), a, b);
  Shape shape = broadcast_shapes(op_name(op), a.shape(), b.shape());
  Tensor out = empty(shape, options_of(a).with_dtype(out_dtype));
  dispatch<BinaryKernel>(op, a.device(), cast(a, compute_dtype), cast(b, compute_dtype), out);
  return out;
}

void check_no_internal_overlap(const char* op, const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d) {
    check_value(t.stride(d) != 0 || t.size(d) <= 1, op,
                "cannot write in place into a tensor whose elements share memory (an expanded "
                "tensor of shape ",
                t.shape(), " and strides ", t.strides(), "); clone() it first");
  }
}

namespace {

// True when the view's elements fill a block of storage exactly once, in some dimension order
// (contiguous, transposed, permuted): its strides, sorted, are the running products of its sizes.
bool is_non_overlapping_and_dense(const Tensor& t) {
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size), size-1 dims left out
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.shape()[d] != 1) dims.emplace_back(t.strides()[d], t.shape()[d]);
  std::sort(dims.begin(), dims.end());
  int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

}  // namespace

void check_no_partial_overlap(const char* op, const Tensor& out, const Tensor& input) {
  if (!out.defined() || !input.defined() || out.storage() != input.storage()) return;
  if (out.numel() == 0 || input.numel() == 0) return;
  if (out.offset() == input.offset() && out.shape() == input.shape() &&
      out.strides() == input.strides()) {
    return;  // the same elements: each is read before it is written
  }
  // PyTorch's rule (get_overlap_status): only views that are dense permutations of a contiguous
  // block are compared; for others (x[::2] against x[1::2], which interleave without sharing an
  // element) the storage ranges say too little, and the op runs, as in PyTorch.
  if (!is_non_overlapping_and_dense(out) || !is_non_overlapping_and_dense(input)) return;
  // Both views exist, so their extents were checked when they were made and cannot overflow.
  int64_t out_end = checked_extent(op, out.shape(), out.strides(), out.offset());
  int64_t in_end = checked_extent(op, input.shape(), input.strides(), input.offset());
  bool disjoint = out_end <= input.offset() || in_end <= out.offset();
  check_state(disjoint, op,
              "unsupported operation: some elements of the input tensor and the written-to tensor "
              "refer to a single memory location (the tensor written to, of shape ",
              out.shape(), " at offset ", out.offset(), ", and an input of shape ", input.shape(),
              " at offset ", input.offset(), "). Please clone() the input first.");
}

}  // namespace wick::detail
