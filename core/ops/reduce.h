// Reductions over all dims (dims empty) or the given dims, with keepdim as in PyTorch.
#pragma once

#include "core/tensor.h"

namespace wick {

// Integer and bool tensors sum to int64.
Tensor sum(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor max(const Tensor& x);  // of all elements
Tensor min(const Tensor& x);
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim = false);
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x);  // index into the flattened tensor
Tensor argmin(const Tensor& x);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);
// The largest / smallest value over several dims (no indices), e.g. for a stable logsumexp.
Tensor amax(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
// Whether any / all elements are non-zero (bool results); over no elements, false / true.
Tensor any(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
Tensor all(const Tensor& x, const DimList& dims = {}, bool keepdim = false);
// The vector p-norm over `dims` (all when empty): p = 2 (Euclidean), 1, inf, -inf, 0 (count of
// non-zeros) or any other p, as torch.norm / torch.linalg.vector_norm.
Tensor norm(const Tensor& x, double p = 2.0, const DimList& dims = {}, bool keepdim = false);
// Same shape and same elements.
bool equal(const Tensor& a, const Tensor& b);
// |a - b| <= atol + rtol |b| everywhere (broadcasting), as torch.allclose.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);
// Variance with Bessel's correction by default (divide by n - correction).
Tensor var(const Tensor& x, const DimList& dims = {}, int64_t correction = 1, bool keepdim = false);
Tensor std(const Tensor& x, const DimList& dims = {}, int64_t correction = 1, bool keepdim = false);
// log(sum(exp(x))) computed without overflow: max + log(sum(exp(x - max))).
Tensor logsumexp(const Tensor& x, const DimList& dims, bool keepdim = false);

}  // namespace wick
