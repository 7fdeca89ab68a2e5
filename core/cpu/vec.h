// The float vector of the CPU micro-kernels (gemm.cpp, conv_direct.cpp). It comes from GCC's
// vector extensions, so the same code compiles to AVX-512, AVX2 or SSE depending on -march;
// a kernel shapes its register tile from kVector.
#pragma once

#include <cstring>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

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

// rows[r][l] becomes rows[l][r]: a kVector x kVector block transposed. On AVX-512 in registers,
// in three rounds of shuffles (the usual 16 x 16 transpose: interleave pairs of rows, then pairs
// of pairs, then 128-bit quarters twice) - 64 shuffles for 256 values, against a load and a store
// per value through memory. (GCC's generic __builtin_shuffle with computed masks compiled to
// lane-by-lane moves and was slower than the plain loop.)
#if defined(__AVX512F__) && !defined(__clang__)
// GCC 12 warns that the undefined vector its shuffle intrinsics start from "may be used" (or,
// in the sanitizer build, "is used") uninitialized wherever they are inlined (GCC bug 105593,
// fixed in 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
inline void transpose_block(Vec (&rows)[kVector]) {
#if defined(__AVX512F__)
  __m512 t[16], r[16];
  for (int i = 0; i < 16; ++i) r[i] = __m512(rows[i]);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int h = 0; h < 16; h += 8) {
    for (int i = 0; i < 4; ++i) {
      t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
      t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xdd);
    }
  }
  for (int i = 0; i < 8; ++i) {
    rows[i] = Vec(_mm512_shuffle_f32x4(t[i], t[i + 8], 0x88));
    rows[i + 8] = Vec(_mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd));
  }
#else
  float block[kVector][kVector];
  std::memcpy(block, rows, sizeof(block));
  for (int r = 0; r < kVector; ++r)
    for (int l = 0; l < kVector; ++l) rows[l][r] = block[r][l];
#endif
}
#if defined(__AVX512F__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace wick::cpu
