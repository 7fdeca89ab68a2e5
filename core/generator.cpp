#include "core/generator.h"

namespace wick {

Generator::Generator(uint64_t seed) { state_.seed = seed; }

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_ = PhiloxState{seed, 0};
}

uint64_t Generator::seed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_.seed;
}

PhiloxState Generator::reserve(int64_t numel) {
  std::lock_guard<std::mutex> lock(mutex_);
  PhiloxState start = state_;
  state_.offset += (static_cast<uint64_t>(numel) + 3) / 4;  // four words per counter
  return start;
}

PhiloxState Generator::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

void Generator::set_state(PhiloxState state) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_ = state;
}

Generator& default_generator() {
  static Generator generator;
  return generator;
}

void manual_seed(uint64_t seed) { default_generator().manual_seed(seed); }

}  // namespace wick
