// The vector requantization shared by the VNNI and AMX int8 kernels (Note [int8 GEMM]): 16 int32
// accumulators of one output row become 16 uint8 outputs with the float32 operations of
// requantize() (gemm_int8.cpp), in the same order, so every backend writes the same bytes.
// Included only by files compiled with -ffp-contract=off (core/CMakeLists.txt).
#pragma once

#if defined(__x86_64__)

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "core/cpu/gemm_int8.h"

// The instructions the int8 kernels use, enabled per function so the files build without -march.
#define WICK_VNNI_FN __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
#define WICK_VNNI_INLINE \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni"), always_inline)) inline

namespace wick::cpu {

// Row o's accumulators for the 16 columns of panel j (raw sums over the bytes) -> out.
WICK_VNNI_INLINE void store_requantized(const Int8Block& b, __m512i sums, int64_t o, int64_t j) {
  const Requantization& rq = *b.rq;
  const __m512i acc =
      _mm512_sub_epi32(sums, _mm512_set1_epi32(rq.input_zero_point * b.w->row_sums()[o]));
  __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), _mm512_set1_ps(rq.multiplier[o]));
  if (rq.bias) y = _mm512_add_ps(y, _mm512_set1_ps(rq.bias[o]));
  y = _mm512_div_ps(y, _mm512_set1_ps(rq.output_scale));
  __m512 q = _mm512_roundscale_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  q = _mm512_add_ps(q, _mm512_set1_ps(static_cast<float>(rq.output_zero_point)));
  const float lo = rq.relu ? static_cast<float>(rq.output_zero_point) : 0.0f;
  q = _mm512_max_ps(q, _mm512_set1_ps(lo));  // the second operand when q is NaN
  q = _mm512_min_ps(q, _mm512_set1_ps(255.0f));
  const __m128i bytes = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(q));
  const int64_t c0 = j * kInt8Panel;
  const int n = static_cast<int>(std::min<int64_t>(kInt8Panel, b.cols - c0));
  uint8_t* dst = b.out + o * b.out_row_stride + c0 * b.out_col_stride;
  if (b.out_col_stride == 1) {
    _mm_mask_storeu_epi8(dst, static_cast<__mmask16>((1u << n) - 1), bytes);
    return;
  }
  alignas(16) uint8_t lane[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(lane), bytes);
  for (int c = 0; c < n; ++c) dst[c * b.out_col_stride] = lane[c];
}

}  // namespace wick::cpu

#endif
