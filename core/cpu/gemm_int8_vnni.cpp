// The AVX-512 VNNI int8 kernel (Note [int8 GEMM] in gemm_int8.h): an 8-row x 32-column tile of
// int32 accumulators in 16 zmm registers, vpdpbusd for the products, and the requantization
// epilogue, shared with the AMX kernel, that turns a row of 16 accumulators into 16 bytes.
//
// The functions carry target attributes, so this file compiles for any x86-64 and its code runs
// only after gemm_int8.cpp has checked the processor (int8_backend_available).
#include <algorithm>
#include <cstring>

#include "core/cpu/gemm_int8.h"
#include "core/cpu/gemm_int8_epilogue.h"

namespace wick::cpu {

#if defined(__x86_64__)

namespace {

constexpr int MR = 8;  // weight rows per tile
// Two panels, not three: with 24 accumulators GCC 12 kept some of them on the stack inside the k
// loop (it compiles _mm512_dpbusd_epi32 as a copy of the accumulator, the instruction and a copy
// back, and ran out of registers for the copies); 16 stay in registers.
constexpr int kMaxPanels = 2;

// Rows [o, o + MR) x panels [j, j + NV): acc[i][v] = sum_k W[o + i, k] X[16 (j + v) + lane, k].
template <int NV>
WICK_VNNI_FN void tile(const Int8Block& b, int64_t o, int64_t o_end, int64_t j) {
  const int64_t pd = b.w->padded_depth();
  const int8_t* w = b.w->data() + o * pd;
  const uint8_t* x = b.packed_x + j * kInt8Panel * pd;
  const int64_t panel_bytes = kInt8Panel * pd;
  __m512i acc[MR][NV];
  for (int i = 0; i < MR; ++i) {
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_si512();
  }
  for (int64_t k = 0; k < pd; k += 4) {
    __m512i xv[NV];
    for (int v = 0; v < NV; ++v) {
      xv[v] = _mm512_loadu_si512(x + v * panel_bytes + k * kInt8Panel);
    }
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      int32_t four;
      std::memcpy(&four, w + i * pd + k, 4);
      const __m512i wb = _mm512_set1_epi32(four);
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_dpbusd_epi32(acc[i][v], xv[v], wb);
    }
  }
  const int rows = static_cast<int>(std::min<int64_t>(MR, o_end - o));
  for (int i = 0; i < rows; ++i) {
    for (int v = 0; v < NV; ++v) store_requantized(b, acc[i][v], o + i, j + v);
  }
}

}  // namespace

void gemm_int8_vnni(const Int8Block& b, int64_t o0, int64_t o1, int64_t j0, int64_t j1) {
  for (int64_t j = j0; j < j1; j += kMaxPanels) {
    const int64_t nv = std::min<int64_t>(kMaxPanels, j1 - j);
    for (int64_t o = o0; o < o1; o += MR) {
      if (nv == 2) {
        tile<2>(b, o, o1, j);
      } else {
        tile<1>(b, o, o1, j);
      }
    }
  }
}

#else

void gemm_int8_vnni(const Int8Block& b, int64_t o0, int64_t o1, int64_t j0, int64_t j1) {
  gemm_int8_portable(b, o0, o1, j0, j1);  // never chosen: not available off x86-64
}

#endif

}  // namespace wick::cpu
