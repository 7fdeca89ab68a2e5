// The AMX int8 kernel (Note [int8 GEMM] in gemm_int8.h): 2 x 2 accumulator tiles of 16 x 16
// int32 (tmm0-3), two weight tiles (tmm4-5: 16 rows x 64 signed bytes) and two column tiles
// (tmm6-7: 16 groups of 4 k x 16 columns, unsigned) per 64-deep step, multiplied by tdpbsud
// (signed A times unsigned B). Each finished tile is stored to a 1 KiB buffer in L1 and
// requantized from there row by row by the same epilogue as the VNNI kernel.
//
// Note [AMX permission]
// Linux does not give a process the 8 KiB of tile state by default: it must ask once with
// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA), after which every thread of the process
// may use the tiles (each loads its own tile configuration). If the kernel refuses (an old kernel,
// a seccomp sandbox), amx_permitted() says so and the VNNI kernel runs instead.
#include <algorithm>
#include <cstring>

#include "core/cpu/gemm_int8.h"
#include "core/cpu/gemm_int8_epilogue.h"

#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#define WICK_HAVE_AMX 1
#endif

namespace wick::cpu {

#if WICK_HAVE_AMX

namespace {

constexpr long kArchGetXcompPerm = 0x1022;
constexpr long kArchReqXcompPerm = 0x1023;
constexpr int kXFeatureTileData = 18;

bool request_amx() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  const uint64_t xcr0 = (uint64_t(hi) << 32) | lo;
  if ((xcr0 & (3u << 17)) != (3u << 17)) return false;  // the OS saves no tile state
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXFeatureTileData) != 0) return false;
  uint64_t granted = 0;
  if (syscall(SYS_arch_prctl, kArchGetXcompPerm, &granted) != 0) return false;
  return (granted >> kXFeatureTileData) & 1;
}

// The 64-byte operand of ldtilecfg: palette 1, every tile 16 rows of 64 bytes.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

#define WICK_AMX_FN \
  __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

// Rows [o, o + 16 TO) x panels [j, j + TP), TO and TP being 1 or 2.
template <int TO, int TP>
WICK_AMX_FN void tiles(const Int8Block& b, int64_t o, int64_t o_end, int64_t j) {
  const int64_t pd = b.w->padded_depth();
  const int8_t* w = b.w->data() + o * pd;
  const uint8_t* x = b.packed_x + j * kInt8Panel * pd;
  const int64_t panel_bytes = kInt8Panel * pd;
  _tile_zero(0);
  if constexpr (TP == 2) _tile_zero(1);
  if constexpr (TO == 2) _tile_zero(2);
  if constexpr (TO == 2 && TP == 2) _tile_zero(3);
  for (int64_t k = 0; k < pd; k += 64) {
    _tile_loadd(4, w + k, pd);
    _tile_loadd(6, x + k * kInt8Panel, 64);
    if constexpr (TP == 2) _tile_loadd(7, x + panel_bytes + k * kInt8Panel, 64);
    _tile_dpbsud(0, 4, 6);
    if constexpr (TP == 2) _tile_dpbsud(1, 4, 7);
    if constexpr (TO == 2) {
      _tile_loadd(5, w + 16 * pd + k, pd);
      _tile_dpbsud(2, 5, 6);
      if constexpr (TP == 2) _tile_dpbsud(3, 5, 7);
    }
  }
  alignas(64) int32_t c[4][16][16];
  _tile_stored(0, c[0], 64);
  if constexpr (TP == 2) _tile_stored(1, c[1], 64);
  if constexpr (TO == 2) _tile_stored(2, c[2], 64);
  if constexpr (TO == 2 && TP == 2) _tile_stored(3, c[3], 64);
  for (int ti = 0; ti < TO; ++ti) {
    const int rows = static_cast<int>(std::min<int64_t>(16, o_end - (o + 16 * ti)));
    for (int tp = 0; tp < TP; ++tp) {
      const int32_t(*tile)[16] = c[2 * ti + tp];
      for (int r = 0; r < rows; ++r) {
        store_requantized(b, _mm512_load_si512(tile[r]), o + 16 * ti + r, j + tp);
      }
    }
  }
}

WICK_AMX_FN void run(const Int8Block& b, int64_t o0, int64_t o1, int64_t j0, int64_t j1) {
  TileConfig config;
  for (int t = 0; t < 8; ++t) config.colsb[t] = 64, config.rows[t] = 16;
  _tile_loadconfig(&config);
  for (int64_t j = j0; j < j1; j += 2) {
    const bool two_panels = j + 1 < j1;
    for (int64_t o = o0; o < o1; o += 32) {
      const bool two_rows = o + 16 < o1;
      if (two_rows && two_panels) {
        tiles<2, 2>(b, o, o1, j);
      } else if (two_rows) {
        tiles<2, 1>(b, o, o1, j);
      } else if (two_panels) {
        tiles<1, 2>(b, o, o1, j);
      } else {
        tiles<1, 1>(b, o, o1, j);
      }
    }
  }
  _tile_release();
}

}  // namespace

bool amx_permitted() {
  static const bool permitted = request_amx();
  return permitted;
}

void gemm_int8_amx(const Int8Block& b, int64_t o0, int64_t o1, int64_t j0, int64_t j1) {
  run(b, o0, o1, j0, j1);
}

#else

bool amx_permitted() { return false; }

void gemm_int8_amx(const Int8Block& b, int64_t o0, int64_t o1, int64_t j0, int64_t j1) {
  gemm_int8_portable(b, o0, o1, j0, j1);  // never chosen: AMX is not available here
}

#endif

}  // namespace wick::cpu
