// Helpers shared by the op front functions (not part of the public API).
#pragma once

#include "core/dispatch.h"
#include "core/tensor.h"

namespace wick::detail {

inline void check_defined(const char* op, const Tensor& t) {
  check_value(t.defined(), op, "got an undefined tensor");
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b);

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

}  // namespace wick::detail
