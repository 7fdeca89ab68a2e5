// wick's float32 GEMM, built the way BLIS and OpenBLAS are (Goto & van de Geijn, "Anatomy of
// High-Performance Matrix Multiplication", 2008; the BLIS papers of Van Zee et al.).
//
// Three ideas make a GEMM fast:
//  1. A micro-kernel keeps an MR x NR tile of C in vector registers and, for each of kc steps,
//     broadcasts MR values of A and multiplies them by NR values of B with fused multiply-adds.
//     With AVX-512 the tile is 12 x 32: 24 accumulators of 16 floats, two B vectors and a
//     broadcast - 27 of the 32 registers - so loads never wait for arithmetic.
//  2. Packing: before the micro-kernel runs, a kc x nc block of B and an mc x kc block of A are
//     copied into the exact order the micro-kernel reads them (thin panels, contiguous). The
//     kernel then streams memory linearly whatever the operands' strides, and the packed blocks
//     are sized to stay in cache: A's block in L2, a B panel in L1, all of B's block in L3.
//  3. Threads split the rows of C evenly; each packs its own A block and all share the packed B.
//
// Loop nest (jc, pc, ic, jr, ir) with block sizes NC, KC, MC and the micro-tile MR x NR:
//   for jc in n step NC:              B block columns
//     for pc in k step KC:            shared dimension; C += A[:, pc] @ B[pc, :]
//       pack B[pc:pc+kc, jc:jc+nc]    (all threads, NR-wide panels)
//       for ic in m step MC:          (each thread its own rows)
//         pack A[ic:ic+mc, pc:pc+kc]  (MR-tall panels)
//         for jr in nc step NR: for ir in mc step MR: micro_kernel
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/cpu/gemm.h"
#include "core/cpu/loops.h"
#include "core/cpu/vec.h"

namespace wick::cpu {

namespace {

// The tile shape follows the register count (Vec and kVector: core/cpu/vec.h).
// Note [a shorter tile for few rows]
// A 12-row tile wastes a third of its work when C has 16 rows (two tiles cover 24), and a ninth
// at 32 or 64 - exactly the output channels of ResNet-20's convolutions, whose per-image GEMMs
// have 16-64 rows. So on AVX-512 a second, 8-row tile (16 accumulators) takes products whose rows
// it covers with clearly less padding; large products keep the 12-row tile, which loads B less
// often per multiply-add. The choice is per call (kShortMR, pick_mr).
#if defined(__AVX512F__)
constexpr int MR = 12;
constexpr int kShortMR = 8;
#else
constexpr int MR = 6;
constexpr int kShortMR = MR;
#endif
constexpr int NR = 2 * kVector;

constexpr int64_t KC = 384;   // KC x NR floats of B (48 KiB) ~ L1; MC x KC of A (288 KiB) ~ L2
constexpr int64_t MC = 192;   // a multiple of MR and of kShortMR
constexpr int64_t NC = 4096;  // KC x NC of B (6 MiB) ~ L3

// acc = A_panel (kc x R, packed) @ B_panel (kc x NR, packed), R = MR or kShortMR
template <int R>
inline void micro_kernel(int64_t kc, const float* __restrict a, const float* __restrict b,
                         Vec acc[R][2]) {
  for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = Vec{};
  for (int64_t p = 0; p < kc; ++p) {
    Vec b0 = *reinterpret_cast<const Vec*>(b);
    Vec b1 = *reinterpret_cast<const Vec*>(b + kVector);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      // A scalar operand broadcasts by itself, and loads straight from memory into the FMA
      // ({1to16}). Broadcasting by hand as `Vec{} + a[i]` costs an add and a shuffle per value
      // (the add cannot be dropped: -0.0 + 0.0 is +0.0), which on Intel cores compete with the
      // FMAs for the same two ports and cost a third of the GEMM's speed.
      acc[i][0] += b0 * a[i];
      acc[i][1] += b1 * a[i];
    }
    a += R;
    b += NR;
  }
}

// C tile (rows x cols at c) = alpha * acc + beta * C tile; beta == 0 never reads C.
template <int R>
inline void store_tile(Vec acc[R][2], int64_t rows, int64_t cols, float alpha, float beta, float* c,
                       int64_t rsc, int64_t csc) {
  if (rows == R && cols == NR && csc == 1) {
    for (int i = 0; i < R; ++i) {
      float* row = c + i * rsc;
      for (int h = 0; h < 2; ++h) {
        Vec v = acc[i][h] * alpha;
        if (beta != 0.0f) v += load_unaligned(row + h * kVector) * beta;
        store_unaligned(row + h * kVector, v);
      }
    }
    return;
  }
  alignas(64) float tile[R][NR];
  std::memcpy(tile, acc, sizeof(tile));
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      float& out = c[i * rsc + j * csc];
      out = beta == 0.0f ? alpha * tile[i][j] : alpha * tile[i][j] + beta * out;
    }
  }
}

// B[pc:pc+kc, j0:j0+nc] into NR-wide panels: panel jp holds rows p = 0..kc-1, NR values each,
// zero-padded past the last column. 16-bit inputs become float32 here, so the micro-kernel always
// multiplies floats and accumulates in float32 (as GPUs do for half-precision GEMMs).
template <class TB>
void pack_b(const TB* b, int64_t rsb, int64_t csb, int64_t kc, int64_t nc, int64_t panel,
            float* dst) {
  int64_t j0 = panel * NR;
  int64_t cols = std::min<int64_t>(NR, nc - j0);
  const TB* src = b + j0 * csb;
  dst += panel * NR * kc;
  if (rsb == 1 && csb != 1) {
    // B stored transposed (B^T row-major: a convolution's weight gradient multiplies by the
    // im2col matrix transposed): read each column of B contiguously and scatter it down the
    // panel, which stays in L1, instead of gathering every row from NR columns far apart.
    // In blocks of 16 rows, so the 16 panel rows being written (2 KiB) stay in L1 while each
    // column contributes 16 contiguous values; a whole column at a time wrote kc lines per column.
    // Whole kVector x kVector blocks of float are transposed in registers (a ResNet-18 batch-1
    // convolution packs its 9 MB weight this way, Note [few positions: the product transposed]).
    int64_t p_done = 0;
    if constexpr (std::is_same_v<TB, float>) {
      if (cols == NR) {
        for (; p_done + kVector <= kc; p_done += kVector) {
          for (int64_t j0 = 0; j0 < NR; j0 += kVector) {
            Vec block[kVector];
            for (int jj = 0; jj < kVector; ++jj)
              block[jj] = load_unaligned(src + (j0 + jj) * csb + p_done);
            transpose_block(block);
            for (int pp = 0; pp < kVector; ++pp)
              store_unaligned(dst + (p_done + pp) * NR + j0, block[pp]);
          }
        }
      }
    }
    constexpr int64_t kRows = 16;
    for (int64_t p0 = p_done; p0 < kc; p0 += kRows) {
      const int64_t p1 = std::min(kc, p0 + kRows);
      for (int64_t j = 0; j < cols; ++j) {
        const TB* column = src + j * csb;
        for (int64_t p = p0; p < p1; ++p) dst[p * NR + j] = float(column[p]);
      }
      for (int64_t p = p0; p < p1; ++p) {
        for (int64_t j = cols; j < NR; ++j) dst[p * NR + j] = 0.0f;
      }
    }
    return;
  }
  for (int64_t p = 0; p < kc; ++p) {
    float* row = dst + p * NR;
    const TB* s = src + p * rsb;
    if (std::is_same_v<TB, float> && csb == 1 && cols == NR) {
      std::memcpy(row, s, NR * sizeof(float));
    } else {
      for (int64_t j = 0; j < cols; ++j) row[j] = float(s[j * csb]);
      for (int64_t j = cols; j < NR; ++j) row[j] = 0.0f;
    }
  }
}

// A[i0:i0+mc, pc:pc+kc] into R-tall panels: panel ip holds columns p = 0..kc-1, R values each.
template <int R, class TA>
void pack_a(const TA* a, int64_t rsa, int64_t csa, int64_t mc, int64_t kc, float* dst) {
  for (int64_t i0 = 0; i0 < mc; i0 += R) {
    int64_t rows = std::min<int64_t>(R, mc - i0);
    float* panel = dst + i0 * kc;
    if (rows < R) std::fill(panel, panel + R * kc, 0.0f);
    if (csa == 1) {  // row-major A: read each row contiguously
      for (int64_t i = 0; i < rows; ++i) {
        const TA* s = a + (i0 + i) * rsa;
        for (int64_t p = 0; p < kc; ++p) panel[p * R + i] = float(s[p]);
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        const TA* s = a + i0 * rsa + p * csa;
        for (int64_t i = 0; i < rows; ++i) panel[p * R + i] = float(s[i * rsa]);
      }
    }
  }
}

// B as a strided matrix (every GEMM but the convolutions' implicit im2col).
template <class TB>
struct StridedB {
  const TB* b;
  MatrixRef ref;
  void pack(int64_t pc, int64_t kc, int64_t jc, int64_t nc, int64_t panel, float* dst) const {
    pack_b(b + pc * ref.row_stride + jc * ref.col_stride, ref.row_stride, ref.col_stride, kc, nc,
           panel, dst);
  }
};

// B from a PanelSource.
struct SourcedB {
  const PanelSource& source;
  void pack(int64_t pc, int64_t kc, int64_t jc, int64_t nc, int64_t panel, float* dst) const {
    source.pack(pc, kc, jc + panel * NR, std::min<int64_t>(NR, nc - panel * NR), NR,
                dst + panel * NR * kc);
  }
};

// Note [reused packing buffers]
// Each thread keeps its packing buffers between calls and only grows them. Allocating them per
// call cost more than the arithmetic of a small product: a convolution runs one GEMM per image
// (16 x 1024 x 144 for ResNet-20's first stage), and a fresh 288 KiB + 576 KiB pair per call
// came back from the kernel as new pages, faulted in one by one. A calling thread keeps at most
// KC x NC floats of B (6 MiB) and MC x KC of A (288 KiB) per thread of its team.
// benchmarks/resnet_layers.py measures the effect.
enum class Scratch { kPackedA, kPackedB };

float* scratch(Scratch which, size_t floats) {
  struct Buffer {
    float* ptr = nullptr;
    size_t capacity = 0;
    ~Buffer() { std::free(ptr); }
  };
  thread_local Buffer buffers[2];
  Buffer& b = buffers[static_cast<int>(which)];
  if (b.capacity < floats) {
    std::free(b.ptr);
    b.ptr = static_cast<float*>(std::aligned_alloc(64, (floats * sizeof(float) + 63) / 64 * 64));
    check_state(b.ptr != nullptr, "gemm", "cannot allocate a ", floats * sizeof(float),
                "-byte packing buffer");
    b.capacity = floats;
  }
  return b.ptr;
}

// Note [few rows: threads split the columns]
// Threads normally split C's rows and share one packed block of B. With few rows - a batch-1
// convolution computed as positions x output channels, whose B is the weight - the rows split
// unevenly (five 12-row panels over two threads: 3 and 2) and B, the large operand, is packed
// half by each core and then read whole by both, every other panel from the other core's cache.
// Then each thread takes a share of the columns instead, packs its own B panels and all of the
// (small) A, and no thread waits for another. The same pays whenever A is no larger than B: a
// thread then packs m x k floats of A more than its share but skips the barrier after every
// packed block of B and reads none of B from the other core's cache. MNIST's MLP layer, 64 x 784
// times 784 x 256, 2 threads: 0.204 -> 0.148 ms; 256 x 1024 x 1024: 122-151 -> 171 GFLOP/s.
// With m well above n, sharing still wins (2048 x 256 x 512: 156-178 against 139-158).
bool split_columns_for(int64_t m, int64_t n, int64_t row_panels, int64_t col_panels, int threads) {
  return col_panels >= 4 * threads && (row_panels < 4 * threads || m <= n);
}

// The blocked loops for a tile of R rows; threads = 1 runs in the calling thread.
// `prepacked`, when given, is all of A packed by pack_whole_a<R> and no A block is packed here.
template <int R, class TA, class BMatrix>
void gemm_blocked(int64_t m, int64_t n, int64_t k, float alpha, const TA* a, MatrixRef a_ref,
                  const BMatrix& b, float beta, float* c, int64_t rsc, int64_t csc, int threads,
                  const float* prepacked = nullptr) {
  int64_t kc_max = std::min<int64_t>(KC, k);
  int64_t nc_max = std::min<int64_t>(NC, n);
  // The calling thread's buffers, taken before the parallel region (which must not throw): B's
  // holds the block the team shares (pack_b fills it for everyone) or, split by columns, one
  // block per thread, still KC x NC floats in all; A's holds one block per thread.
  const int64_t row_panels = (m + R - 1) / R;
  const int64_t padded_m = row_panels * R;
  const int64_t col_panels = (n + NR - 1) / NR;
  const bool split_columns =
      threads > 1 && split_columns_for(m, n, row_panels, col_panels, threads);
  // Blocks of B at most nc_step wide, so that a thread's block fits its part of the buffer
  // however many threads the team really has.
  const int64_t thread_columns = (col_panels + threads - 1) / threads * NR;  // a thread's share
  const int64_t nc_step =
      split_columns ? std::min(thread_columns, std::max<int64_t>(NR, NC / threads / NR * NR)) : NC;
  const int64_t b_block_floats = ((std::min(nc_step, nc_max) + NR - 1) / NR) * NR * kc_max;
  float* packed_b = scratch(Scratch::kPackedB,
                            static_cast<size_t>((split_columns ? threads : 1) * b_block_floats));
  float* packed_a = prepacked ? nullptr : scratch(Scratch::kPackedA, threads * MC * kc_max);

#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0, nt = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    nt = omp_get_num_threads();
#endif
    // Each thread owns an equal share of C's rows, counted in R-row panels so no thread gets
    // more than one panel extra; it walks its share in blocks of at most MC rows. Split by
    // columns, a thread has every row and a share of the B panels, which it packs itself.
    const int64_t row_begin = split_columns ? 0 : row_panels * t / nt * R;
    const int64_t row_end = split_columns ? m : std::min(m, row_panels * (t + 1) / nt * R);
    const int64_t col_begin = split_columns ? col_panels * t / nt * NR : 0;
    const int64_t col_end = split_columns ? std::min(n, col_panels * (t + 1) / nt * NR) : n;
    float* a_block = prepacked ? nullptr : packed_a + t * MC * kc_max;
    float* b_block = split_columns ? packed_b + t * b_block_floats : packed_b;
    Vec acc[R][2];
    for (int64_t jc = col_begin; jc < col_end; jc += nc_step) {
      int64_t nc = std::min<int64_t>(nc_step, col_end - jc);
      int64_t b_panels = (nc + NR - 1) / NR;
      for (int64_t pc = 0; pc < k; pc += KC) {
        int64_t kc = std::min<int64_t>(KC, k - pc);
        float beta_block = pc == 0 ? beta : 1.0f;
        if (split_columns) {
          for (int64_t panel = 0; panel < b_panels; ++panel) b.pack(pc, kc, jc, nc, panel, b_block);
        } else {
#pragma omp for schedule(static)
          for (int64_t panel = 0; panel < b_panels; ++panel) {
            b.pack(pc, kc, jc, nc, panel, b_block);
          }  // implicit barrier: B is packed before anyone uses it
        }
        for (int64_t ic = row_begin; ic < row_end; ic += MC) {
          int64_t rows = std::min<int64_t>(MC, row_end - ic);
          if (prepacked) {
            a_block = const_cast<float*>(prepacked) + pc * padded_m + ic * kc;
          } else {
            pack_a<R>(a + ic * a_ref.row_stride + pc * a_ref.col_stride, a_ref.row_stride,
                      a_ref.col_stride, rows, kc, a_block);
          }
          for (int64_t jr = 0; jr < nc; jr += NR) {
            const float* b_panel = b_block + (jr / NR) * NR * kc;
            for (int64_t ir = 0; ir < rows; ir += R) {
              micro_kernel<R>(kc, a_block + ir * kc, b_panel, acc);
              store_tile<R>(acc, std::min<int64_t>(R, rows - ir), std::min<int64_t>(NR, nc - jr),
                            alpha, beta_block, c + (ic + ir) * rsc + (jc + jr) * csc, rsc, csc);
            }
          }
        }
        if (!split_columns) {
#pragma omp barrier  // nobody repacks B while another thread still reads it
        }
      }
    }
  }
}

// Rows of C once padded to whole tiles of r rows.
constexpr int64_t padded_rows(int64_t m, int64_t r) { return (m + r - 1) / r * r; }

// Note [a shorter tile for few rows]: the short tile when it pads at least 5% less.
bool use_short_tile(int64_t m) {
  return kShortMR != MR && padded_rows(m, MR) * 100 > padded_rows(m, kShortMR) * 105;
}

// Note [a weight packed once]
// All of A in the order gemm_blocked reads its blocks: for each KC-deep slice, every R-row
// panel, kc x R floats - the layout pack_a gives one MC block, for all m rows at once. So block
// (pc, ic) starts at pc * padded_m + ic * kc, and a product reads it in place instead of packing.
template <int R>
void pack_whole_a(int64_t m, int64_t k, MatrixRef a_ref, float* dst) {
  const auto* a = static_cast<const float*>(a_ref.data);
  const int64_t padded_m = padded_rows(m, R);
  const int64_t slices = (k + KC - 1) / KC;
  // The slices are independent: threads share them when the weight is large enough (a batch-1
  // convolution packs its weight for one image, so the packing is not amortised over a batch).
#pragma omp parallel for schedule(static) if (m * k >= (1 << 18) && !omp_in_parallel())
  for (int64_t slice = 0; slice < slices; ++slice) {
    const int64_t pc = slice * KC;
    pack_a<R>(a + pc * a_ref.col_stride, a_ref.row_stride, a_ref.col_stride, m,
              std::min<int64_t>(KC, k - pc), dst + pc * padded_m);
  }
}

int product_threads(int64_t m, int64_t n, int64_t k) {
#ifdef _OPENMP
  // Small products are not worth waking a second thread for.
  if (m * n * k >= 64 * 64 * 64 && !omp_in_parallel()) return omp_get_max_threads();
#endif
  (void)m, (void)n, (void)k;
  return 1;
}

// The float32-output GEMM over inputs of types TA and TB (converted while packing).
template <class TA, class TB>
void gemm_core(int64_t m, int64_t n, int64_t k, float alpha, MatrixRef a_ref, MatrixRef b_ref,
               float beta, MutableMatrixRef c_ref) {
  if (m == 0 || n == 0) return;
  const auto* a = static_cast<const TA*>(a_ref.data);
  const auto* b = static_cast<const TB*>(b_ref.data);
  auto* c = static_cast<float*>(c_ref.data);
  const int64_t rsc = c_ref.row_stride, csc = c_ref.col_stride;
  if (k == 0) {  // C = beta * C
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float& out = c[i * rsc + j * csc];
        out = beta == 0.0f ? 0.0f : beta * out;
      }
    }
    return;
  }

  const int threads = product_threads(m, n, k);
  const StridedB<TB> bm{b, b_ref};
  if (use_short_tile(m)) {
    gemm_blocked<kShortMR>(m, n, k, alpha, a, a_ref, bm, beta, c, rsc, csc, threads);
  } else {
    gemm_blocked<MR>(m, n, k, alpha, a, a_ref, bm, beta, c, rsc, csc, threads);
  }
}

}  // namespace

PackedA::PackedA(int64_t m, int64_t k, MatrixRef a)
    : m_(m), k_(k), tile_rows_(use_short_tile(m) ? kShortMR : MR) {
  panels_ = memory::HostBuffer<float>(static_cast<size_t>(padded_rows(m, tile_rows_) * k));
  if (tile_rows_ == MR) {
    pack_whole_a<MR>(m, k, a, panels_.data());
  } else {
    pack_whole_a<kShortMR>(m, k, a, panels_.data());
  }
}

namespace {
template <class BMatrix>
void gemm_prepacked_with(const PackedA& a, int64_t n, float alpha, const BMatrix& b, float beta,
                         MutableMatrixRef c, const int tile_rows, const float* panels) {
  const int64_t m = a.rows(), k = a.depth();
  auto* cp = static_cast<float*>(c.data);
  const int threads = product_threads(m, n, k);
  if (tile_rows == MR) {
    gemm_blocked<MR, float>(m, n, k, alpha, nullptr, {}, b, beta, cp, c.row_stride, c.col_stride,
                            threads, panels);
  } else {
    gemm_blocked<kShortMR, float>(m, n, k, alpha, nullptr, {}, b, beta, cp, c.row_stride,
                                  c.col_stride, threads, panels);
  }
}
}  // namespace

void gemm_prepacked(const PackedA& a, int64_t n, float alpha, MatrixRef b, float beta,
                    MutableMatrixRef c) {
  if (a.m_ == 0 || n == 0 || a.k_ == 0) {
    gemm_packed(a.m_, n, a.k_, alpha, {nullptr, 0, 0}, b, beta, c);  // C = beta * C
    return;
  }
  gemm_prepacked_with(a, n, alpha, StridedB<float>{static_cast<const float*>(b.data), b}, beta, c,
                      a.tile_rows_, a.panels_.data());
}

void gemm_prepacked(const PackedA& a, int64_t n, float alpha, const PanelSource& b, float beta,
                    MutableMatrixRef c) {
  if (a.m_ == 0 || n == 0 || a.k_ == 0) {
    gemm_packed(a.m_, n, a.k_, alpha, {nullptr, 0, 0}, {nullptr, 0, 0}, beta, c);
    return;
  }
  gemm_prepacked_with(a, n, alpha, SourcedB{b}, beta, c, a.tile_rows_, a.panels_.data());
}

void gemm_packed(int64_t m, int64_t n, int64_t k, float alpha, MatrixRef a, MatrixRef b, float beta,
                 MutableMatrixRef c) {
  gemm_core<float, float>(m, n, k, alpha, a, b, beta, c);
}

template <class TA, class TB, class TC>
void gemm_mixed(int64_t m, int64_t n, int64_t k, float alpha, MatrixRef a, MatrixRef b, float beta,
                MutableMatrixRef c) {
  if constexpr (std::is_same_v<TC, float>) {
    gemm_core<TA, TB>(m, n, k, alpha, a, b, beta, c);
  } else {
    // A 16-bit C is accumulated in a float32 copy and rounded once at the end: rounding the
    // partial sums after every KC block would lose the precision float32 accumulation buys.
    std::vector<float> acc(m * n, 0.0f);
    auto* out = static_cast<TC*>(c.data);
    if (beta != 0.0f) {
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          acc[i * n + j] = float(out[i * c.row_stride + j * c.col_stride]);
    }
    gemm_core<TA, TB>(m, n, k, alpha, a, b, beta, {acc.data(), n, 1});
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) out[i * c.row_stride + j * c.col_stride] = TC(acc[i * n + j]);
  }
}

template void gemm_mixed<Half, Half, Half>(int64_t, int64_t, int64_t, float, MatrixRef, MatrixRef,
                                           float, MutableMatrixRef);
template void gemm_mixed<Half, Half, float>(int64_t, int64_t, int64_t, float, MatrixRef, MatrixRef,
                                            float, MutableMatrixRef);
template void gemm_mixed<BFloat16, BFloat16, BFloat16>(int64_t, int64_t, int64_t, float, MatrixRef,
                                                       MatrixRef, float, MutableMatrixRef);
template void gemm_mixed<BFloat16, BFloat16, float>(int64_t, int64_t, int64_t, float, MatrixRef,
                                                    MatrixRef, float, MutableMatrixRef);

}  // namespace wick::cpu
