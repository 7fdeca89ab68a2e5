// The int8 GEMM's driver: choosing a backend, packing both operands, splitting the output among
// threads, and the portable kernel (Note [int8 GEMM] in gemm_int8.h). The AVX-512 VNNI kernel is
// in gemm_int8_vnni.cpp and the AMX kernel in gemm_int8_amx.cpp; each is compiled for its
// instructions with a target attribute and runs only when the processor has them, so a build
// for any x86-64 (or another architecture) keeps working through the portable kernel.
#include "core/cpu/gemm_int8.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "core/cpu/loops.h"
#include "core/error.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <emmintrin.h>
#endif

namespace wick::cpu {

namespace {

#if defined(__x86_64__)
// XCR0: which register states the operating system saves on a context switch.
uint64_t xgetbv0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}
#endif

bool cpu_has_avx512_vnni() {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE)) return false;
  // The OS must save the opmask and zmm state (XCR0 bits 1, 2, 5, 6, 7).
  if ((xgetbv0() & 0xe6) != 0xe6) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const bool avx512f = b & (1u << 16), avx512bw = b & (1u << 30), avx512vl = b & (1u << 31);
  const bool vnni = c & (1u << 11);
  return avx512f && avx512bw && avx512vl && vnni;
#else
  return false;
#endif
}

bool cpu_has_amx_int8() {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const bool amx_tile = d & (1u << 24), amx_int8 = d & (1u << 25);
  return amx_tile && amx_int8 && cpu_has_avx512_vnni();
#else
  return false;
#endif
}

std::atomic<int> g_override{-1};  // set_int8_backend: -1 automatic, else an Int8Backend

}  // namespace

const char* int8_backend_name(Int8Backend backend) {
  switch (backend) {
    case Int8Backend::kPortable:
      return "portable";
    case Int8Backend::kAvx512Vnni:
      return "avx512_vnni";
    case Int8Backend::kAmx:
      return "amx";
  }
  return "?";
}

Int8Backend int8_backend_from_name(const char* op, const std::string& name) {
  for (Int8Backend b : {Int8Backend::kPortable, Int8Backend::kAvx512Vnni, Int8Backend::kAmx}) {
    if (name == int8_backend_name(b)) return b;
  }
  throw std::invalid_argument(error_message(op, "unknown int8 GEMM backend '", name,
                                            "'; expected portable, avx512_vnni or amx"));
}

bool int8_backend_available(Int8Backend backend) {
  static const bool vnni = cpu_has_avx512_vnni();
  static const bool amx = cpu_has_amx_int8();
  switch (backend) {
    case Int8Backend::kPortable:
      return true;
    case Int8Backend::kAvx512Vnni:
      return vnni;
    case Int8Backend::kAmx:
      return amx && amx_permitted();
  }
  return false;
}

void set_int8_backend(std::optional<Int8Backend> backend) {
  if (backend) {
    check_state(int8_backend_available(*backend), "set_gemm_backend", "the ",
                int8_backend_name(*backend), " int8 GEMM is not available on this machine");
  }
  g_override.store(backend ? static_cast<int>(*backend) : -1);
}

Int8Backend int8_backend(int64_t depth) {
  if (const char* env = std::getenv("WICK_INT8_GEMM"); env && *env) {
    Int8Backend b = int8_backend_from_name("WICK_INT8_GEMM", env);
    check_state(int8_backend_available(b), "WICK_INT8_GEMM", "the ", env,
                " int8 GEMM is not available on this machine");
    return b;
  }
  if (int forced = g_override.load(); forced >= 0) return static_cast<Int8Backend>(forced);
  // AMX consumes 64 k per step: a shallower product (the first layer of a CNN, K = 9) would be
  // mostly zero padding, and VNNI's 4-deep steps do it faster.
  const bool deep = depth >= 64;
  if (deep && int8_backend_available(Int8Backend::kAmx)) return Int8Backend::kAmx;
  if (int8_backend_available(Int8Backend::kAvx512Vnni)) return Int8Backend::kAvx512Vnni;
  return Int8Backend::kPortable;
}

int64_t int8_padded_depth(int64_t depth, Int8Backend backend) {
  const int64_t step = backend == Int8Backend::kAmx ? 64 : 4;
  return std::max<int64_t>(step, (depth + step - 1) / step * step);
}

PackedInt8Weight::PackedInt8Weight(int64_t rows, int64_t depth, const int8_t* w, int64_t row_stride,
                                   Int8Backend backend)
    : rows_(rows),
      depth_(depth),
      padded_depth_(int8_padded_depth(depth, backend)),
      backend_(backend) {
  const int64_t padded_rows = (rows + 15) / 16 * 16;
  data_.assign(padded_rows * padded_depth_, 0);
  row_sums_.assign(padded_rows, 0);
  for (int64_t o = 0; o < rows; ++o) {
    const int8_t* src = w + o * row_stride;
    std::memcpy(data_.data() + o * padded_depth_, src, depth);
    int32_t sum = 0;
    for (int64_t k = 0; k < depth; ++k) sum += src[k];
    row_sums_[o] = sum;
  }
}

void pack_int8_rows(int64_t cols, int64_t depth, const uint8_t* x, int64_t ldx,
                    int64_t padded_depth, uint8_t* dst) {
  const int64_t panels = int8_panels(cols), groups = padded_depth / 4, full = depth / 4;
  // Panel by panel (in parallel when there is enough to copy), writing each panel in order: group
  // g takes 4 bytes from each of the 16 rows, which stay in L1 while the panel is written.
  parallel_for(panels, std::max<int64_t>(1, kParallelGrain / (kInt8Panel * padded_depth)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t j = begin; j < end; ++j) {
                   uint8_t* panel = dst + j * kInt8Panel * padded_depth;
                   const int64_t c0 = j * kInt8Panel;
                   const int64_t n = std::min<int64_t>(kInt8Panel, cols - c0);
                   int64_t g = 0;
#if defined(__SSE2__)
                   // Whole panels: 4 x 4 transposes of 32-bit words (4 rows, 4 groups).
                   for (; n == kInt8Panel && g + 4 <= full; g += 4) {
                     for (int64_t c = 0; c < kInt8Panel; c += 4) {
                       auto load = [&](int64_t r) {
                         return _mm_loadu_si128(
                             reinterpret_cast<const __m128i*>(x + (c0 + c + r) * ldx + 4 * g));
                       };
                       const __m128i a = load(0), b = load(1), cc = load(2), d = load(3);
                       const __m128i ab_lo = _mm_unpacklo_epi32(a, b);
                       const __m128i cd_lo = _mm_unpacklo_epi32(cc, d);
                       const __m128i ab_hi = _mm_unpackhi_epi32(a, b);
                       const __m128i cd_hi = _mm_unpackhi_epi32(cc, d);
                       const __m128i words[4] = {
                           _mm_unpacklo_epi64(ab_lo, cd_lo), _mm_unpackhi_epi64(ab_lo, cd_lo),
                           _mm_unpacklo_epi64(ab_hi, cd_hi), _mm_unpackhi_epi64(ab_hi, cd_hi)};
                       for (int i = 0; i < 4; ++i) {
                         _mm_storeu_si128(
                             reinterpret_cast<__m128i*>(panel + (g + i) * 4 * kInt8Panel + 4 * c),
                             words[i]);
                       }
                     }
                   }
#endif
                   for (; g < groups; ++g) {
                     uint8_t* group = panel + g * 4 * kInt8Panel;
                     for (int64_t c = 0; c < kInt8Panel; ++c) {
                       const uint8_t* row = c < n ? x + (c0 + c) * ldx + 4 * g : nullptr;
                       if (c < n && g < full) {
                         std::memcpy(group + 4 * c, row, 4);
                       } else {
                         for (int b = 0; b < 4; ++b) {
                           group[4 * c + b] = c < n && 4 * g + b < depth ? row[b] : 0;
                         }
                       }
                     }
                   }
                 }
               });
}

void pack_int8_group(const uint8_t* const rows[4], int64_t cols, int64_t padded_depth, int64_t g,
                     uint8_t* dst) {
  const int64_t panel_bytes = kInt8Panel * padded_depth, full = cols / kInt8Panel;
  uint8_t* group = dst + g * 4 * kInt8Panel;
  int64_t j = 0;
#if defined(__SSE2__)
  // Two rounds of byte and 16-bit interleaves zip 4 rows of 16 bytes into 16 groups of 4.
  for (; j < full; ++j) {
    auto load = [&](int b) {
      return rows[b] ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(rows[b] + j * kInt8Panel))
                     : _mm_setzero_si128();
    };
    const __m128i r0 = load(0), r1 = load(1), r2 = load(2), r3 = load(3);
    const __m128i lo01 = _mm_unpacklo_epi8(r0, r1), hi01 = _mm_unpackhi_epi8(r0, r1);
    const __m128i lo23 = _mm_unpacklo_epi8(r2, r3), hi23 = _mm_unpackhi_epi8(r2, r3);
    __m128i* out = reinterpret_cast<__m128i*>(group + j * panel_bytes);
    _mm_storeu_si128(out + 0, _mm_unpacklo_epi16(lo01, lo23));  // columns 0-3
    _mm_storeu_si128(out + 1, _mm_unpackhi_epi16(lo01, lo23));  // columns 4-7
    _mm_storeu_si128(out + 2, _mm_unpacklo_epi16(hi01, hi23));  // columns 8-11
    _mm_storeu_si128(out + 3, _mm_unpackhi_epi16(hi01, hi23));  // columns 12-15
  }
#endif
  for (; j < int8_panels(cols); ++j) {
    uint8_t* out = group + j * panel_bytes;
    for (int64_t c = 0; c < kInt8Panel; ++c) {
      const int64_t col = j * kInt8Panel + c;
      for (int b = 0; b < 4; ++b) out[c * 4 + b] = col < cols && rows[b] ? rows[b][col] : 0;
    }
  }
}

void pack_int8_depth_major(int64_t cols, int64_t depth, const uint8_t* x, int64_t ldx,
                           int64_t padded_depth, uint8_t* dst) {
  for (int64_t g = 0; g < padded_depth / 4; ++g) {
    const uint8_t* rows[4];
    for (int b = 0; b < 4; ++b) {
      const int64_t k = 4 * g + b;
      rows[b] = k < depth ? x + k * ldx : nullptr;  // depth padding: zeros
    }
    pack_int8_group(rows, cols, padded_depth, g, dst);
  }
}

uint8_t requantize(int32_t sum, int32_t row_sum, int64_t o, const Requantization& rq) {
  const int32_t acc = sum - rq.input_zero_point * row_sum;
  float y = static_cast<float>(acc) * rq.multiplier[o];
  if (rq.bias) y = y + rq.bias[o];
  float q = std::nearbyint(y / rq.output_scale) + static_cast<float>(rq.output_zero_point);
  const float lo = rq.relu ? static_cast<float>(rq.output_zero_point) : 0.0f;
  if (!(q >= lo)) q = lo;  // NaN clamps low, as the vector max does
  if (q > 255.0f) q = 255.0f;
  return static_cast<uint8_t>(q);
}

// The reference kernel: one output at a time, in plain C++.
void gemm_int8_portable(const Int8Block& b, int64_t o0, int64_t o1, int64_t j0, int64_t j1) {
  const int64_t pd = b.w->padded_depth();
  for (int64_t j = j0; j < j1; ++j) {
    const uint8_t* panel = b.packed_x + j * kInt8Panel * pd;
    const int64_t c0 = j * kInt8Panel, n = std::min<int64_t>(kInt8Panel, b.cols - c0);
    for (int64_t o = o0; o < o1; ++o) {
      const int8_t* w = b.w->data() + o * pd;
      for (int64_t c = 0; c < n; ++c) {
        int32_t sum = 0;
        for (int64_t k = 0; k < pd; ++k) {
          sum += int32_t(w[k]) * int32_t(panel[(k / 4) * 4 * kInt8Panel + c * 4 + k % 4]);
        }
        b.out[o * b.out_row_stride + (c0 + c) * b.out_col_stride] =
            requantize(sum, b.w->row_sums()[o], o, *b.rq);
      }
    }
  }
}

void gemm_u8s8_requantize(const PackedInt8Weight& w, int64_t cols, const uint8_t* packed_x,
                          uint8_t* out, int64_t out_row_stride, int64_t out_col_stride,
                          const Requantization& rq) {
  if (w.rows() == 0 || cols == 0) return;
  const Int8Block block{&w, packed_x, cols, out, out_row_stride, out_col_stride, &rq};
  // A weight packed for AMX also suits VNNI (64 is a multiple of 4): if the tiles were refused
  // (Note [AMX permission]), the vector kernel runs instead of faulting.
  auto kernel = gemm_int8_portable;
  if (w.backend() == Int8Backend::kAvx512Vnni) kernel = gemm_int8_vnni;
  if (w.backend() == Int8Backend::kAmx) {
    kernel = amx_permitted()                                    ? gemm_int8_amx
             : int8_backend_available(Int8Backend::kAvx512Vnni) ? gemm_int8_vnni
                                                                : gemm_int8_portable;
  }
  // Work items are 32 rows x 96 columns (a few micro-tiles of every backend), in row-major
  // order so a thread's items share weight rows; threads take contiguous ranges of items.
  constexpr int64_t kRowsPerItem = 32, kPanelsPerItem = 6;
  const int64_t panels = int8_panels(cols);
  const int64_t row_items = (w.rows() + kRowsPerItem - 1) / kRowsPerItem;
  const int64_t col_items = (panels + kPanelsPerItem - 1) / kPanelsPerItem;
  const int64_t macs_per_item = kRowsPerItem * kPanelsPerItem * kInt8Panel * w.padded_depth();
  // One item is a few hundred thousand multiply-adds; ask for ~4 items' worth before a thread.
  const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 21) / macs_per_item);
  parallel_for(row_items * col_items, grain, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o0 = (item / col_items) * kRowsPerItem;
      const int64_t j0 = (item % col_items) * kPanelsPerItem;
      kernel(block, o0, std::min(w.rows(), o0 + kRowsPerItem), j0,
             std::min(panels, j0 + kPanelsPerItem));
    }
  });
}

}  // namespace wick::cpu
