// Helpers shared by the op front functions (not part of the public API).
#pragma once

#include "core/dispatch.h"
#include "core/ops/factory.h"
#include "core/tensor.h"

namespace wick::detail {

inline void check_defined(const char* op, const Tensor& t) {
  check_value(t.defined(), op, "got an undefined tensor");
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b);

// empty(), with an overflowing size reported under `op`'s name (Note [checked sizes]).
Tensor empty_for(const char* op, const Shape& shape, const TensorOptions& options);

// `t` as `dtype`, without recording autograd history (ops record their own).
Tensor cast(const Tensor& t, DType dtype);

// A 0-d tensor holding `value`, with the dtype it takes next to a tensor of dtype `other`.
Tensor wrap_scalar(const Scalar& value, DType other, Device device);

// Allocates the output and runs the kernel; no autograd.
Tensor unary_forward(OpKey op, const Tensor& x, DType out_dtype, const UnaryAttrs& attrs = {});
Tensor binary_forward(OpKey op, const Tensor& a, const Tensor& b, DType compute_dtype,
                      DType out_dtype);

// Refuses an in-place write into a tensor whose elements overlap (an expanded tensor), which
// would make the result depend on the order elements are visited.
void check_no_internal_overlap(const char* op, const Tensor& t);

// Note [partial overlap]
// An in-place op or a copy_ that reads `input` while writing `out` is only well defined when the
// two are the same elements in the same order (x.add_(x)) or share no memory at all. When they
// partly overlap (x[1:].add_(x[:-1]), x.copy_(x.t())) the result depends on the order the kernel
// visits elements, so it is refused, as PyTorch refuses it. As in PyTorch, the check compares the
// storage ranges of views that are dense (contiguous up to a permutation of dims); other views,
// such as the interleaved x[::2] and x[1::2], are let through.
void check_no_partial_overlap(const char* op, const Tensor& out, const Tensor& input);

}  // namespace wick::detail
