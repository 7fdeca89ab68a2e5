// The random number generator: a seed and an offset into Philox's counter space (core/philox.h).
// Each random op reserves the counters it will use and advances the offset, so the sequence of
// random tensors after manual_seed(s) is reproducible on every machine and thread count.
#pragma once

#include <cstdint>
#include <mutex>

#include "core/kernels.h"

namespace wick {

class Generator {
 public:
  explicit Generator(uint64_t seed = kDefaultSeed);
  void manual_seed(uint64_t seed);
  uint64_t seed() const;
  // Reserves counters for `numel` elements and returns where they start.
  PhiloxState reserve(int64_t numel);
  // The whole state, for checkpoints that must resume the exact random sequence.
  PhiloxState state() const;
  void set_state(PhiloxState state);

  static constexpr uint64_t kDefaultSeed = 67280421310721ull;  // PyTorch's default seed

 private:
  mutable std::mutex mutex_;  // data-loader workers draw random numbers too
  PhiloxState state_;
};

Generator& default_generator();
void manual_seed(uint64_t seed);

}  // namespace wick
