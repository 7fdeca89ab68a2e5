// Views (share storage, change metadata - Note [views]) and the ops that copy: contiguous, clone,
// to(dtype/device), detach.
#pragma once

#include <vector>

#include "core/tensor.h"

namespace wick {

// A shape may contain one -1, inferred from the element count.
Tensor reshape(const Tensor& x, const Shape& shape);  // a view when possible, else a copy
Tensor view(const Tensor& x, const Shape& shape);     // a view, or an error saying why not
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor permute(const Tensor& x, const DimList& dims);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor expand(const Tensor& x, const Shape& shape);
// Python slice semantics: start and end are clamped to the dim; step must be positive.
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
// `offset` is counted from the start of the storage, like PyTorch's storage_offset.
Tensor as_strided(const Tensor& x, const Shape& shape, const Strides& strides, int64_t offset);

Tensor contiguous(const Tensor& x);
Tensor clone(const Tensor& x);
Tensor to(const Tensor& x, Device device, DType dtype);
Tensor detach(const Tensor& x);

}  // namespace wick
