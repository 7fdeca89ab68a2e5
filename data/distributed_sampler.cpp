#include "data/distributed_sampler.h"

#include <numeric>

#include "core/error.h"

namespace wick::data {

DistributedSampler::DistributedSampler(int64_t dataset_size, int64_t num_replicas, int64_t rank,
                                       bool shuffle, uint64_t seed, bool drop_last)
    : dataset_size_(dataset_size),
      num_replicas_(num_replicas),
      rank_(rank),
      shuffle_(shuffle),
      seed_(seed),
      drop_last_(drop_last) {
  const char* op = "DistributedSampler";
  check_value(dataset_size >= 0, op, "dataset size must be non-negative; got ", dataset_size);
  check_value(num_replicas >= 1, op, "num_replicas must be positive; got ", num_replicas);
  check_index(rank >= 0 && rank < num_replicas, op, "rank ", rank,
              " is out of range for num_replicas ", num_replicas, " (expected 0..",
              num_replicas - 1, ")");
  // PyTorch's counts: with drop_last the tail that does not divide evenly is dropped, otherwise
  // the indices are padded up to the next multiple.
  num_samples_ =
      drop_last ? dataset_size / num_replicas : (dataset_size + num_replicas - 1) / num_replicas;
}

void DistributedSampler::set_epoch(int64_t epoch) {
  check_value(epoch >= 0, "DistributedSampler", "epoch must be non-negative; got ", epoch);
  epoch_override_ = epoch;
}

std::vector<int64_t> DistributedSampler::indices(int64_t epoch) const {
  if (epoch_override_ >= 0) epoch = epoch_override_;
  std::vector<int64_t> order;
  if (shuffle_) {
    order = random_permutation(dataset_size_, seed_, epoch);
  } else {
    order.resize(dataset_size_);
    std::iota(order.begin(), order.end(), int64_t{0});
  }
  int64_t total = total_size();
  if (static_cast<int64_t>(order.size()) > total) {
    order.resize(total);  // drop_last: cut the tail
  } else {
    // Pad by repeating from the front (more than once if the dataset is smaller than the
    // padding, as PyTorch does), so every rank gets the same number of indices.
    for (int64_t i = 0; static_cast<int64_t>(order.size()) < total; ++i) {
      order.push_back(order[i % dataset_size_]);
    }
  }
  std::vector<int64_t> shard;
  shard.reserve(num_samples_);
  for (int64_t i = rank_; i < total; i += num_replicas_) shard.push_back(order[i]);
  return shard;
}

}  // namespace wick::data
