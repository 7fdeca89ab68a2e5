// Indexing with index tensors (int64; int32 is converted), softmax, and one_hot.
#pragma once

#include "core/tensor.h"

namespace wick {

// The entries of x at positions `index` (1-D) along dim.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// out[i][j][k] = x[i][index[i][j][k]][k] for dim 1 (likewise for other dims).
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
// A copy of x with src added at the positions index names along dim (repeats add up).
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// int64 [..., num_classes] with a 1 at each index; num_classes -1 means max(index) + 1.
Tensor one_hot(const Tensor& index, int64_t num_classes = -1);

Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

}  // namespace wick
