// Advanced indexing: what `x[mask]`, `x[idx]` and `x[idx] = v` mean in NumPy and PyTorch when an
// index is a tensor rather than an int or a slice.
//
// `indices` lists one optional index tensor per leading dimension of x (an undefined tensor means
// "all of this dimension", like `:`). Integer tensors (int64, int32, uint8) pick positions and
// broadcast against each other; a bool tensor of k dims stands for the k integer tensors of its
// nonzero() positions. As in NumPy and PyTorch, the broadcast index shape replaces the indexed
// dims in the result: in their place when the indexed dims are adjacent, else at the front.
//
// These ops are composites (Note [advanced index as a composite]): they turn the indices into
// positions along one flattened dimension and call index_select / scatter_add, whose backward
// already exists, so gradients, broadcasting and devices come for free.
#pragma once

#include <vector>

#include "core/tensor.h"

namespace wick {

// int64 [n, x.dim()]: the coordinates of the n nonzero (true) elements, in row-major order.
Tensor nonzero(const Tensor& x);

// x[indices...] (PyTorch's aten::index). Out-of-range positions raise std::out_of_range.
Tensor index(const Tensor& x, const std::vector<Tensor>& indices);

// A copy of x with x[indices...] replaced by `values` (broadcast to the indexed shape), or with
// values added there when `accumulate` (repeated positions then add up; without accumulate the
// last write to a repeated position wins).
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate = false);
// The same, written into x (the `x[idx] = v` of Python). Records autograd like other in-place
// ops (Note [in-place and autograd]).
Tensor& index_put_(Tensor& x, const std::vector<Tensor>& indices, const Tensor& values,
                   bool accumulate = false);

// The elements of x where mask (bool, broadcastable to x) is true, as a 1-D tensor.
Tensor masked_select(const Tensor& x, const Tensor& mask);

}  // namespace wick
