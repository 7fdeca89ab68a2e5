// DistributedSampler: each rank of a data-parallel job visits its own shard of the dataset -
// PyTorch's torch.utils.data.distributed.DistributedSampler, with its arguments and results.
//
//   data::DistributedSampler sampler(train->size(), world_size, rank, /*shuffle=*/true, seed);
//   options.sampler = std::make_shared<data::DistributedSampler>(sampler);
//   data::DataLoader loader(train, options);
//   loader.set_epoch(epoch);   // the loader passes its epoch to indices(): a new shuffle per epoch
//
// Each epoch: the indices 0..n-1, permuted from (seed, epoch) when shuffling - the same
// permutation on every rank, since all ranks know seed and epoch - are padded by repeating the
// first ones until their count divides evenly by the number of replicas (or, with drop_last, cut
// to the largest count that does), and rank r takes every num_replicas-th index starting at r.
// The shards are disjoint apart from the padding, together they cover the dataset, and they have
// equal lengths - which DDP needs: a rank with one batch more would wait in an all-reduce the
// others never start.
//
// Note [set_epoch]
// PyTorch's sampler must be told the epoch (sampler.set_epoch(e)) or every epoch repeats the
// first shuffle. wick's samplers are pure functions of the epoch the DataLoader passes in
// (data/sampler.h), so loader.set_epoch(e), or just iterating the loader again, already
// reshuffles. set_epoch() is here for code written the PyTorch way: once called, the sampler uses
// that epoch and ignores the loader's count.
#pragma once

#include <cstdint>
#include <vector>

#include "data/sampler.h"

namespace wick::data {

class DistributedSampler : public Sampler {
 public:
  DistributedSampler(int64_t dataset_size, int64_t num_replicas, int64_t rank, bool shuffle = true,
                     uint64_t seed = 0, bool drop_last = false);
  // Indices per rank per epoch: ceil(n / replicas), or floor with drop_last.
  int64_t size() const override { return num_samples_; }
  std::vector<int64_t> indices(int64_t epoch) const override;
  void set_epoch(int64_t epoch);  // Note [set_epoch]
  int64_t total_size() const { return num_samples_ * num_replicas_; }
  int64_t num_replicas() const { return num_replicas_; }
  int64_t rank() const { return rank_; }

 private:
  int64_t dataset_size_, num_replicas_, rank_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  int64_t num_samples_;
  int64_t epoch_override_ = -1;
};

}  // namespace wick::data
