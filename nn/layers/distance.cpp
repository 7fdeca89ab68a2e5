#include "nn/layers/distance.h"

#include <stdexcept>

#include "core/ops/op_utils.h"

namespace wick::nn {

namespace functional {

namespace {

// PyTorch reports shapes that do not broadcast as a RuntimeError.
Shape broadcast_or_throw(const char* op, const Tensor& a, const Tensor& b) {
  try {
    return broadcast_shapes(op, a.shape(), b.shape());
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
}

}  // namespace

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  wick::detail::check_defined("cosine_similarity", x1);
  wick::detail::check_defined("cosine_similarity", x2);
  Shape shape = broadcast_or_throw("cosine_similarity", x1, x2);
  Tensor a = x1.expand(shape), b = x2.expand(shape);
  // Each vector divided by its own norm first, as PyTorch 1.13 does: the result stays within
  // [-1, 1] where the product of the norms would overflow or lose precision.
  Tensor na = clamp_min(norm(a, 2.0, {dim}, /*keepdim=*/true), eps);
  Tensor nb = clamp_min(norm(b, 2.0, {dim}, /*keepdim=*/true), eps);
  return ((a / na) * (b / nb)).sum({dim});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  wick::detail::check_defined("pairwise_distance", x1);
  wick::detail::check_defined("pairwise_distance", x2);
  Shape shape = broadcast_or_throw("pairwise_distance", x1, x2);
  check_state(!shape.empty(), "pairwise_distance",
              "expected inputs with at least one dim; got shapes ", x1.shape(), " and ",
              x2.shape());
  return norm(x1 - x2 + eps, p, {-1}, keepdim);
}

}  // namespace functional

namespace F = functional;

CosineSimilarity::CosineSimilarity(int64_t dim, double eps)
    : Module("CosineSimilarity"), dim_(dim), eps_(eps) {}

Tensor CosineSimilarity::forward(const Tensor& x1, const Tensor& x2) {
  return F::cosine_similarity(x1, x2, dim_, eps_);
}

PairwiseDistance::PairwiseDistance(double p, double eps, bool keepdim)
    : Module("PairwiseDistance"), p_(p), eps_(eps), keepdim_(keepdim) {}

Tensor PairwiseDistance::forward(const Tensor& x1, const Tensor& x2) {
  return F::pairwise_distance(x1, x2, p_, eps_, keepdim_);
}

}  // namespace wick::nn
