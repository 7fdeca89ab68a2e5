// Statistics, searching, counting, scattering and sampling as compositions of other ops (Note
// [compositions] in composite_linalg.h): lerp, isclose, var_mean, count_nonzero, bucketize,
// searchsorted, histc, bincount, unique, scatter, randperm, multinomial, normal.
#pragma once

#include <optional>
#include <tuple>

#include "core/generator.h"
#include "core/ops/factory.h"
#include "core/tensor.h"

namespace wick {

// start + weight * (end - start), broadcasting all three.
Tensor lerp(const Tensor& start, const Tensor& end, const Scalar& weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
// |a - b| <= atol + rtol * |b| elementwise (bool); equal infinities are close, NaNs only with
// equal_nan.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
               bool equal_nan = false);
// (var, mean) over dims, as torch.var_mean.
std::tuple<Tensor, Tensor> var_mean(const Tensor& x, const DimList& dims = {},
                                    int64_t correction = 1, bool keepdim = false);
// The number of non-zero elements over dims (all when empty), int64.
Tensor count_nonzero(const Tensor& x, const DimList& dims = {});
// For each value, the index of the bucket of the sorted 1-D `boundaries` it falls in:
// boundaries[i-1] < v <= boundaries[i] (right: boundaries[i-1] <= v < boundaries[i]).
Tensor bucketize(const Tensor& values, const Tensor& boundaries, bool out_int32 = false,
                 bool right = false);
// For each value, where it would be inserted into the sorted innermost dim of sorted_sequence
// (whose leading dims match values'), leftmost or (right) rightmost. `sorter`, when defined,
// holds the indices that sort an unsorted sequence.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32 = false,
                    bool right = false, const Tensor& sorter = Tensor());
// A histogram of `bins` equal bins over [min, max] (both 0: the data's range); values outside
// are ignored.
Tensor histc(const Tensor& x, int64_t bins = 100, double min = 0, double max = 0);
// Counts (or sums of weights) of each value of a 1-D non-negative integer tensor; the result has
// max(x) + 1 entries, at least minlength.
Tensor bincount(const Tensor& x, const Tensor& weights = Tensor(), int64_t minlength = 0);
// The distinct values of x, flattened (sorted: ascending), with the inverse indices (x's shape)
// and the counts when asked for (undefined tensors otherwise).
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool sorted = true,
                                          bool return_inverse = false, bool return_counts = false);
// A copy of x with x[index[i][j]][j] = src[i][j] for dim 0 (likewise for other dims); the last
// write wins where index repeats. scatter_ writes into x.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
// A random permutation of 0..n-1 (int64 by default).
Tensor randperm(int64_t n, const TensorOptions& options = {},
                Generator& generator = default_generator());
// num_samples indices per row of the (unnormalized, non-negative) probabilities `probs` (1-D or
// 2-D), with or without replacement.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false,
                   Generator& generator = default_generator());
// Normal samples with elementwise (broadcast) means and standard deviations, or of `shape` with
// one mean and std.
Tensor normal(const Tensor& mean, const Tensor& std, Generator& generator = default_generator());
Tensor normal(const Tensor& mean, double std = 1.0, Generator& generator = default_generator());
Tensor normal(double mean, const Tensor& std, Generator& generator = default_generator());
Tensor normal(double mean, double std, const Shape& shape, const TensorOptions& options = {},
              Generator& generator = default_generator());

}  // namespace wick
