// Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
// counter-based generator. philox(key, counter) is a pure function, so element i of a random
// tensor can be computed by whichever thread or GPU block owns it, and the result is the same on
// the CPU and on a GPU. cuRAND's and PyTorch's CUDA generators use the same construction.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/half.h"  // WICK_HOST_DEVICE

namespace wick {

struct Philox4 {
  uint32_t x[4];
};

WICK_HOST_DEVICE inline Philox4 philox4x32(uint64_t seed, uint64_t counter) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(kM0) * c0;
    uint64_t p1 = static_cast<uint64_t>(kM1) * c2;
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  return {{c0, c1, c2, c3}};
}

// A uniform float in [0, 1) from the top 24 bits of a word (every value exactly representable).
WICK_HOST_DEVICE inline float uniform_float(uint32_t bits) {
  return static_cast<float>(bits >> 8) * (1.0f / 16777216.0f);
}

// A uniform double in (0, 1], safe to take the log of.
WICK_HOST_DEVICE inline double uniform_open_double(uint32_t bits) {
  return (static_cast<double>(bits) + 1.0) * (1.0 / 4294967296.0);
}

// The uniform value in (0, 1) of one 32-bit word: the centre of its 2^-32 cell.
WICK_HOST_DEVICE inline double uniform_from_bits(uint32_t bits) {
  return (static_cast<double>(bits) + 0.5) * (1.0 / 4294967296.0);
}

// Element i of a uniform fill uses word i % 4 of philox(seed, offset + i / 4). Kernels that fill
// a range call philox once per four elements; this is the definition they must agree with.
WICK_HOST_DEVICE inline double uniform_at(uint64_t seed, uint64_t offset, int64_t i) {
  Philox4 r = philox4x32(seed, offset + static_cast<uint64_t>(i) / 4);
  return uniform_from_bits(r.x[i % 4]);
}

// Element i of a normal fill: Box-Muller on the word pair (0,1) or (2,3) of
// philox(seed, offset + i / 4); even i take the cosine branch, odd i the sine branch.
WICK_HOST_DEVICE inline double normal_at(uint64_t seed, uint64_t offset, int64_t i) {
  Philox4 r = philox4x32(seed, offset + static_cast<uint64_t>(i) / 4);
  int pair = static_cast<int>(i % 4) / 2;
  double u1 = uniform_open_double(r.x[2 * pair]);
  double u2 = uniform_open_double(r.x[2 * pair + 1]);
  double radius = std::sqrt(-2.0 * std::log(u1));
  double angle = 6.283185307179586476925 * u2;
  return (i % 2 == 0) ? radius * std::cos(angle) : radius * std::sin(angle);
}

}  // namespace wick
