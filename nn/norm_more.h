// nn::functional, part two for normalization, channel dropout, distances and bags of
// embeddings: group_norm, instance_norm, dropout2d, normalize, cosine_similarity,
// pairwise_distance and embedding_bag. Compositions of reductions, arithmetic and indexing, so
// autograd differentiates them and they run on every device.
#pragma once

#include <string>

#include "core/ops.h"

namespace wick::nn::functional {

// input [N, C, *]: the C channels split into num_groups groups, each normalized over its
// channels and all of *; weight and bias [C] (each may be undefined).
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = Tensor(),
                  const Tensor& bias = Tensor(), double eps = 1e-5);

// input [N, C, *]: each (sample, channel) normalized over *. With use_input_stats the
// statistics are the input's and running_mean / running_var (if given, [C]) are updated in
// place with momentum, averaged over the batch (the variance unbiased); without, the running
// statistics normalize.
Tensor instance_norm(const Tensor& input, const Tensor& running_mean = Tensor(),
                     const Tensor& running_var = Tensor(), const Tensor& weight = Tensor(),
                     const Tensor& bias = Tensor(), bool use_input_stats = true,
                     double momentum = 0.1, double eps = 1e-5);

// Zeroes whole channels (all of * for each [n, c] of [N, C, *]) with probability p, scaling the
// rest by 1 / (1 - p); the identity when not training.
Tensor dropout2d(const Tensor& input, double p = 0.5, bool training = true);

// input / max(||input||_p over dim, eps).
Tensor normalize(const Tensor& input, double p = 2.0, int64_t dim = 1, double eps = 1e-12);

// The cosine of the angle between x1 and x2 (broadcast) along dim, each norm clamped to eps.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);

// ||x1 - x2 + eps||_p over the last dim.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2.0, double eps = 1e-6,
                         bool keepdim = false);

// Sums, means or maxima of bags of rows of weight [num_embeddings, dim]. input is 2-D [B, n]
// (B bags of n indices, offsets undefined) or 1-D with offsets [B] (bag b starts at offsets[b];
// with include_last_offset offsets has B + 1 entries, the last the end). per_sample_weights
// (input's shape, mode "sum" only) scales each row. Rows of padding_idx (if >= 0) are left out
// of the bags, and empty bags are zeros. Returns [B, dim].
Tensor embedding_bag(const Tensor& input, const Tensor& weight, const Tensor& offsets = Tensor(),
                     const std::string& mode = "mean", const Tensor& per_sample_weights = Tensor(),
                     bool include_last_offset = false, int64_t padding_idx = -1);

}  // namespace wick::nn::functional
