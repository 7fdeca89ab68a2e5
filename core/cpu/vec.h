// The float vector of the CPU micro-kernels (gemm.cpp, conv_direct.cpp). It comes from GCC's
// vector extensions, so the same code compiles to AVX-512, AVX2 or SSE depending on -march;
// a kernel shapes its register tile from kVector.
#pragma once

#include <cstring>

namespace wick::cpu {

#if defined(__AVX512F__)
constexpr int kVector = 16;
#elif defined(__AVX__)
constexpr int kVector = 8;
#else
constexpr int kVector = 4;
#endif
typedef float Vec __attribute__((vector_size(kVector * sizeof(float))));

// Rows are not vector-aligned in general; memcpy compiles to one unaligned vector move.
inline Vec load_unaligned(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof(Vec));
  return v;
}
inline void store_unaligned(float* p, Vec v) { std::memcpy(p, &v, sizeof(Vec)); }

// The sum of a vector's lanes, halving the vector at each step.
inline float lane_sum(Vec v) {
  float lanes[kVector];
  std::memcpy(lanes, &v, sizeof(Vec));
  for (int width = kVector / 2; width > 0; width /= 2)
    for (int i = 0; i < width; ++i) lanes[i] += lanes[i + width];
  return lanes[0];
}

}  // namespace wick::cpu
