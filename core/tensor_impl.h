// TensorImpl: what a tensor is. A view into a Storage (offset, shape and strides, all counted in
// elements), an element type, and - only once autograd is involved - its autograd state.
//
// Note [views]
// Views (reshape of a contiguous tensor, permute, transpose, slice, select, expand, squeeze,
// unsqueeze, as_strided) make a new TensorImpl over the same Storage with different metadata; no
// bytes move. Element (i0, i1, ...) of a tensor lives at
//     storage.data + (offset + i0 * strides[0] + i1 * strides[1] + ...) * element_size
// A stride of 0 repeats one element along that dimension; that is how expand() broadcasts.
#pragma once

#include <memory>

#include "core/dtype.h"
#include "core/shape.h"
#include "core/storage.h"

namespace wick {

struct AutogradMeta;  // autograd/meta.h: grad, grad_fn, hooks; allocated only when needed

struct TensorImpl {
  TensorImpl(std::shared_ptr<Storage> storage, int64_t offset, const Shape& shape,
             const Strides& strides, DType dtype);
  ~TensorImpl();

  std::shared_ptr<Storage> storage;
  int64_t offset = 0;
  Shape shape;
  Strides strides;
  DType dtype = kFloat32;
  // True for a tensor whose gradient autograd must compute: a leaf the user marked, or the result
  // of an op on such a tensor. Kept here rather than in AutogradMeta because every op checks it.
  bool requires_grad = false;
  // True when this tensor shares storage with the tensor it was derived from through a view op.
  bool is_view = false;
  std::unique_ptr<AutogradMeta> autograd;

  char* data() const {
    return static_cast<char*>(storage->data()) + offset * static_cast<int64_t>(element_size(dtype));
  }
};

}  // namespace wick
