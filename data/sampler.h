// Samplers: the order in which a DataLoader visits a dataset's indices in one epoch.
//
// A sampler is a pure function of the epoch number: indices(epoch) returns the whole order for
// that epoch and changes nothing, so epoch e can be replayed (a resumed run, a second loader)
// and the loader may ask from any thread. Random samplers draw from Philox keyed by (seed, epoch),
// which gives a new permutation each epoch that any machine reproduces from the two numbers.
#pragma once

#include <cstdint>
#include <vector>

namespace wick::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // How many indices one epoch yields.
  virtual int64_t size() const = 0;
  // The indices for `epoch`, in order.
  virtual std::vector<int64_t> indices(int64_t epoch) const = 0;
};

// 0, 1, ..., n - 1 every epoch.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t n);
  int64_t size() const override { return n_; }
  std::vector<int64_t> indices(int64_t epoch) const override;

 private:
  int64_t n_;
};

// A permutation of 0..n-1, a different one each epoch, determined by (seed, epoch).
class RandomSampler : public Sampler {
 public:
  RandomSampler(int64_t n, uint64_t seed);
  int64_t size() const override { return n_; }
  std::vector<int64_t> indices(int64_t epoch) const override;

 private:
  int64_t n_;
  uint64_t seed_;
};

// The given indices, in the given order, every epoch (e.g. a fixed validation split).
class SubsetSampler : public Sampler {
 public:
  explicit SubsetSampler(std::vector<int64_t> indices);
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  std::vector<int64_t> indices(int64_t epoch) const override;

 private:
  std::vector<int64_t> indices_;
};

// The given indices in a random order, a different one each epoch, determined by (seed, epoch).
class SubsetRandomSampler : public Sampler {
 public:
  SubsetRandomSampler(std::vector<int64_t> indices, uint64_t seed);
  int64_t size() const override { return static_cast<int64_t>(indices_.size()); }
  std::vector<int64_t> indices(int64_t epoch) const override;

 private:
  std::vector<int64_t> indices_;
  uint64_t seed_;
};

// A permutation of 0..n-1 from (seed, epoch): Fisher-Yates with Philox 4x32-10 as the source.
std::vector<int64_t> random_permutation(int64_t n, uint64_t seed, int64_t epoch);

}  // namespace wick::data
