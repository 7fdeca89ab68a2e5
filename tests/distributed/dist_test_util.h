// Helpers shared by the multi-process tests: the rank and world size, small models, and
// comparisons of parameters.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "distributed/distributed.h"
#include "wick.h"

namespace wick::dist_test {

inline int rank() { return distributed::get_rank(); }
inline int world() { return distributed::get_world_size(); }

// Linear(6, 8), Tanh, Linear(8, 3): four parameters, initialised from `seed`.
inline std::shared_ptr<nn::Sequential> make_mlp(uint64_t seed) {
  manual_seed(seed);
  return std::make_shared<nn::Sequential>(std::vector<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(6, 8), std::make_shared<nn::Tanh>(),
      std::make_shared<nn::Linear>(8, 3)});
}

// The same rows on every rank: rank r's shard is rows [r * per_rank, (r + 1) * per_rank).
struct Batch {
  Tensor x, y;
};
inline Batch global_batch(int64_t rows, uint64_t seed) {
  manual_seed(seed);
  return {randn({rows, 6}), randn({rows, 3})};
}
inline Batch shard(const Batch& b, int r, int64_t per_rank) {
  return {b.x.narrow(0, r * per_rank, per_rank), b.y.narrow(0, r * per_rank, per_rank)};
}

// Every element as a double.
inline std::vector<double> values(const Tensor& t) { return t.to(kFloat64).to_vector<double>(); }
inline std::vector<double> filled(size_t n, double v) { return std::vector<double>(n, v); }

inline void expect_close(const Tensor& a, const Tensor& b, double atol, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  double diff = (a.to(kFloat64) - b.to(kFloat64)).abs().max().item<double>();
  EXPECT_LE(diff, atol) << what << ": largest difference " << diff;
}

inline void expect_same_parameters(nn::Module& a, nn::Module& b, double atol) {
  auto pa = a.named_parameters(), pb = b.named_parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i)
    expect_close(pa[i].second, pb[i].second, atol, pa[i].first);
}

}  // namespace wick::dist_test
