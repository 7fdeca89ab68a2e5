// Ops that run along one dim: cumulative sums and products, products, sorting and what is built
// on it (argsort, topk, median). cumsum, cumprod and sort are rows of the op table with kernels;
// the others are compositions of them.
#pragma once

#include <optional>

#include "core/tensor.h"

namespace wick {

// Integer and bool inputs accumulate into int64 unless `dtype` says otherwise (PyTorch's rule).
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& x, std::optional<DType> dtype = std::nullopt);  // of all elements
Tensor prod(const Tensor& x, int64_t dim, bool keepdim = false,
            std::optional<DType> dtype = std::nullopt);

// Sorted values and the int64 positions they came from. The sort is always stable, so
// stable=false gives a valid answer too (PyTorch allows any order of equal elements there).
ValuesIndices sort(const Tensor& x, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
// The k largest (or smallest) along dim, in sorted order.
ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true,
                   bool sorted = true);
// The lower median (element (n - 1) / 2 of the sorted values), as torch.median; NaN if any.
Tensor median(const Tensor& x);
ValuesIndices median(const Tensor& x, int64_t dim, bool keepdim = false);

}  // namespace wick
