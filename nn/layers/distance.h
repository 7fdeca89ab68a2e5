// Distances between vectors: the cosine similarity and the p-norm distance, as functions and as
// modules. Compositions of norms and arithmetic, so autograd differentiates them and they run
// on every device.
#pragma once

#include "core/ops.h"
#include "nn/module.h"

namespace wick::nn::functional {

// The cosine of the angle between x1 and x2 (broadcast) along dim, each norm clamped to eps.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);

// ||x1 - x2 + eps||_p over the last dim.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2.0, double eps = 1e-6,
                         bool keepdim = false);

}  // namespace wick::nn::functional

namespace wick::nn {

class CosineSimilarity : public Module {
 public:
  explicit CosineSimilarity(int64_t dim = 1, double eps = 1e-8);
  Tensor forward(const Tensor& x1, const Tensor& x2);
  using Module::forward;  // the one-input form raises: these take two

 private:
  int64_t dim_;
  double eps_;
};

class PairwiseDistance : public Module {
 public:
  explicit PairwiseDistance(double p = 2.0, double eps = 1e-6, bool keepdim = false);
  Tensor forward(const Tensor& x1, const Tensor& x2);
  using Module::forward;  // the one-input form raises: these take two

 private:
  double p_, eps_;
  bool keepdim_;
};

}  // namespace wick::nn
