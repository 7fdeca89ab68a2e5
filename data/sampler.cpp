#include "data/sampler.h"

#include <numeric>
#include <utility>

#include "core/error.h"
#include "core/philox.h"

namespace wick::data {

std::vector<int64_t> random_permutation(int64_t n, uint64_t seed, int64_t epoch) {
  check_value(n >= 0, "random_permutation", "n must be non-negative; got ", n);
  check_value(epoch >= 0, "random_permutation", "epoch must be non-negative; got ", epoch);
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), int64_t{0});
  // Note [sampler randomness]
  // The Philox key is the seed and the counter starts at epoch * 2^32, so every epoch reads its
  // own stretch of the stream (2^32 draws of 64 bits, far more than any permutation needs) and no
  // generator state is kept anywhere. Each draw takes 64 bits and reduces them modulo j + 1; the
  // bias this leaves is below 2^-32 for any dataset that fits in memory, which is far under
  // what a shuffle could reveal.
  uint64_t counter = static_cast<uint64_t>(epoch) << 32;
  for (int64_t j = n - 1; j > 0; --j) {  // swap order[j] with a uniform pick from order[0..j]
    Philox4 r = philox4x32(seed, counter++);
    uint64_t bits = (static_cast<uint64_t>(r.x[0]) << 32) | r.x[1];
    std::swap(order[j], order[bits % static_cast<uint64_t>(j + 1)]);
  }
  return order;
}

SequentialSampler::SequentialSampler(int64_t n) : n_(n) {
  check_value(n >= 0, "SequentialSampler", "size must be non-negative; got ", n);
}

std::vector<int64_t> SequentialSampler::indices(int64_t /*epoch*/) const {
  std::vector<int64_t> order(n_);
  std::iota(order.begin(), order.end(), int64_t{0});
  return order;
}

RandomSampler::RandomSampler(int64_t n, uint64_t seed) : n_(n), seed_(seed) {
  check_value(n >= 0, "RandomSampler", "size must be non-negative; got ", n);
}

std::vector<int64_t> RandomSampler::indices(int64_t epoch) const {
  return random_permutation(n_, seed_, epoch);
}

SubsetSampler::SubsetSampler(std::vector<int64_t> indices) : indices_(std::move(indices)) {}

std::vector<int64_t> SubsetSampler::indices(int64_t /*epoch*/) const { return indices_; }

SubsetRandomSampler::SubsetRandomSampler(std::vector<int64_t> indices, uint64_t seed)
    : indices_(std::move(indices)), seed_(seed) {}

std::vector<int64_t> SubsetRandomSampler::indices(int64_t epoch) const {
  std::vector<int64_t> order = random_permutation(size(), seed_, epoch);
  for (int64_t& i : order) i = indices_[i];
  return order;
}

}  // namespace wick::data
