// The caching allocator's knobs, set through the environment variable WICK_ALLOC_CONF, whose
// format is PyTorch's PYTORCH_ALLOC_CONF: comma-separated `option:value` pairs, e.g.
//
//   WICK_ALLOC_CONF=max_split_size_mb:128,garbage_collection_threshold:0.8
//   WICK_ALLOC_CONF=roundup_power2_divisions:[64:8,256:4,1024:4,>:1]
//
//   max_split_size_mb            blocks of at least this many MiB are never split, so a cached
//                                huge block is not carved up for small requests (default: no
//                                limit); at least 20
//   max_non_split_rounding_mb    a request >= max_split_size takes a cached block only if that
//                                block is less than this much larger (default 20)
//   roundup_power2_divisions     round request sizes up to one of N steps between powers of two
//                                (one N, or a list per power-of-two MiB interval, '>' for the rest)
//   garbage_collection_threshold when a memory fraction is set and reserved memory passes this
//                                share of it, free the oldest cached segments (0 < t < 1)
//   policy                       which policy the CUDA allocator uses: caching (default),
//                                no_caching, bfc, bfc_growth (see policy.h)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace wick::memory {

constexpr size_t kMiB = size_t{1} << 20;
// Power-of-two intervals for roundup_power2_divisions: [1, 2) MiB ... [32 GiB, 64 GiB), and
// everything smaller or larger in the first or last.
constexpr int kRoundupIntervals = 16;

struct AllocatorConfig {
  size_t max_split_size = SIZE_MAX;
  size_t max_non_split_rounding_size = 20 * kMiB;
  double garbage_collection_threshold = 0.0;                         // 0 = off
  std::array<size_t, kRoundupIntervals> roundup_power2_divisions{};  // 0 or 1 = off
  std::string policy = "caching";

  // Parses a WICK_ALLOC_CONF string; throws std::invalid_argument naming the bad option.
  static AllocatorConfig parse(const std::string& text);
  // The configuration in WICK_ALLOC_CONF, or the defaults when it is unset.
  static AllocatorConfig from_env();

  // Divisions that apply to a request of `size` bytes.
  size_t divisions_for(size_t size) const;
};

// Throws std::invalid_argument "[op] ..." unless `name` is one of the policies make_policy knows.
void check_policy_name(const std::string& name, const char* op);

}  // namespace wick::memory
