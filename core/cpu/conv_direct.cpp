// Direct 3x3 convolution over padded rows (Note [direct convolution over padded rows]).
#include "core/cpu/conv_direct.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <utility>

#include "core/cpu/block_table.h"
#include "core/cpu/loops.h"
#include "core/cpu/vec.h"

namespace wick::cpu {

namespace {

// The register block follows the register count (core/cpu/vec.h): RO x RJ accumulators + RJ
// inputs + 1 weight.
#if defined(__AVX512F__)
constexpr int RJ = 3;
#else
constexpr int RJ = 1;
#endif
constexpr int RO = DirectConvWeight::kBlock;
constexpr int kTaps = 9;
constexpr int64_t kColumnsPerStep = RJ * kVector;

// An image padded, and for stride 2 split into four phase planes, P[a][b][u][v] =
// padded[2u + a][2v + b] (Note [direct convolution over padded rows]): the input of output
// j = y * row_width + x through tap (i, k) is then at j + offset(i, k) in channel's planes.
// With stride 1 a row is padded on its right only, row_width = w + pad_w: its left padding is
// the previous row's right padding (and, before the first row, `lead` zeros), so an output row
// computes 2 - pad_w thrown-away columns instead of 2 (none for padding 2).
struct Geometry {
  int64_t c, h, w, pad_h, pad_w, stride;
  int64_t padded_h() const { return h + 2 * pad_h; }
  int64_t padded_w() const { return w + 2 * pad_w; }
  int64_t row_width() const { return stride == 1 ? w + pad_w : (padded_w() + stride - 1) / stride; }
  int64_t lead() const { return stride == 1 ? pad_w : 0; }  // zeros before the first plane
  int64_t phase_plane() const { return (padded_h() + stride - 1) / stride * row_width(); }
  int64_t plane() const { return stride * stride * phase_plane(); }  // one channel's floats
  int64_t out_h() const { return (padded_h() - 3) / stride + 1; }
  int64_t out_w() const { return (padded_w() - 3) / stride + 1; }
  int64_t offset(int i, int k) const {
    const int64_t phase = (i % stride) * stride + k % stride;
    return phase * phase_plane() + i / stride * row_width() + k / stride;
  }
  // Outputs in the padded row space, rounded up to whole vectors.
  int64_t rows() const { return out_h() * row_width(); }
  int64_t rows_rounded() const { return (rows() + kVector - 1) / kVector * kVector; }
  // The last vector of the last channel reads up to rows_rounded() - rows() + 2 floats past the
  // planes; they are zeros and feed only thrown-away outputs.
  int64_t padded_floats() const { return lead() + c * plane() + 2 * kVector; }
};

// Channels [c0, c1) of `image` into the zero-bordered (phase) planes of `padded`.
void pad_channels(const float* image, const Geometry& g, int64_t c0, int64_t c1, float* padded) {
  const int64_t rw = g.row_width();
  if (c0 == 0) std::fill(padded, padded + g.lead(), 0.0f);
  for (int64_t c = c0; c < c1; ++c) {
    float* plane = padded + g.lead() + c * g.plane();
    const float* channel = image + c * g.h * g.w;
    if (g.stride == 1) {  // rows of [w values, pad_w zeros]
      std::fill(plane, plane + g.pad_h * rw, 0.0f);
      for (int64_t y = 0; y < g.h; ++y) {
        float* row = plane + (g.pad_h + y) * rw;
        std::memcpy(row, channel + y * g.w, g.w * sizeof(float));
        std::fill(row + g.w, row + rw, 0.0f);
      }
      std::fill(plane + (g.pad_h + g.h) * rw, plane + g.plane(), 0.0f);
      continue;
    }
    // Phase (a, b) row u holds padded row 2u + a's columns b, b + 2, ...: zeros, then every
    // other value of input row 2u + a - pad_h, then zeros.
    const int64_t phase_rows = g.phase_plane() / rw;
    for (int a = 0; a < 2; ++a) {
      for (int b = 0; b < 2; ++b) {
        float* phase = plane + (a * 2 + b) * g.phase_plane();
        // Columns v with 0 <= 2v + b - pad_w < w.
        const int64_t v0 = std::min(rw, (g.pad_w - b + 1) / 2);
        const int64_t v1 = std::clamp<int64_t>((g.w + g.pad_w - b + 1) / 2, v0, rw);
        for (int64_t u = 0; u < phase_rows; ++u) {
          float* row = phase + u * rw;
          const int64_t y = 2 * u + a - g.pad_h;
          if (y < 0 || y >= g.h) {
            std::fill(row, row + rw, 0.0f);
            continue;
          }
          const float* src = channel + y * g.w + 2 * v0 + b - g.pad_w;
          std::fill(row, row + v0, 0.0f);
          for (int64_t v = 0; v < v1 - v0; ++v) row[v0 + v] = src[2 * v];
          std::fill(row + v1, row + rw, 0.0f);
        }
      }
    }
  }
  if (c1 == g.c) {
    std::fill(padded + g.lead() + g.c * g.plane(), padded + g.padded_floats(), 0.0f);
  }
}

// acc[o][j] = sum_c sum_t weight[o][c][t] * padded[c][j + offsets[t]] for one block of RO
// output channels and the V vectors of outputs from j0; `block` is [C][NT][RO]. NT = 9 is the
// 3x3 convolution; fewer taps are one output phase of a strided input gradient.
template <int V, int NT>
inline void block_step(const float* __restrict padded, const float* __restrict block,
                       const Geometry& g, const int64_t (&offsets)[NT], int64_t j0,
                       float* __restrict acc_rows) {
  Vec acc[RO][V];
  for (int o = 0; o < RO; ++o)
    for (int r = 0; r < V; ++r) acc[o][r] = Vec{};
  const int64_t plane = g.plane();
  const float* in = padded + j0;
  const float* wc = block;
  for (int64_t c = 0; c < g.c; ++c, in += plane, wc += NT * RO) {
#pragma GCC unroll 9
    for (int t = 0; t < NT; ++t) {
      Vec x[V];
      for (int r = 0; r < V; ++r) x[r] = load_unaligned(in + offsets[t] + r * kVector);
#pragma GCC unroll 8
      for (int o = 0; o < RO; ++o) {
        const float wv = wc[t * RO + o];  // a scalar operand broadcasts by itself
        for (int r = 0; r < V; ++r) acc[o][r] += wv * x[r];
      }
    }
  }
  const int64_t rows = g.rows_rounded();
  for (int o = 0; o < RO; ++o)
    for (int r = 0; r < V; ++r) store_unaligned(acc_rows + o * rows + j0 + r * kVector, acc[o][r]);
}

// Every j of the padded row space: steps of RJ vectors, then one narrower step for the rest,
// so no more than the last vector's lanes are thrown away (an 8x8 output is 5 vectors).
template <int NT>
void block_kernel(const float* __restrict padded, const float* __restrict block, const Geometry& g,
                  const int64_t (&offsets)[NT], float* __restrict acc_rows) {
  const int64_t rows = g.rows_rounded();
  int64_t j0 = 0;
  for (; j0 + kColumnsPerStep <= rows; j0 += kColumnsPerStep)
    block_step<RJ, NT>(padded, block, g, offsets, j0, acc_rows);
  if constexpr (RJ > 1) {
    for (; j0 + kVector <= rows; j0 += kVector)
      block_step<1, NT>(padded, block, g, offsets, j0, acc_rows);
  }
}

void block_kernel(const float* __restrict padded, const float* __restrict block, const Geometry& g,
                  float* __restrict acc_rows) {
  int64_t offsets[kTaps];
  for (int t = 0; t < kTaps; ++t) offsets[t] = g.offset(t / 3, t % 3);
  block_kernel<kTaps>(padded, block, g, offsets, acc_rows);
}

// out[o][y][x] = acc[o][y * row_width + x] + bias[o] for the block's real channels.
void write_block(const float* acc_rows, const Geometry& g, int64_t o0, int64_t o1,
                 const float* bias, float* out) {
  const int64_t rw = g.row_width(), rows = g.rows_rounded(), oh = g.out_h(), ow = g.out_w();
  for (int64_t o = o0; o < o1; ++o) {
    const float b = bias != nullptr ? bias[o] : 0.0f;
    const float* src = acc_rows + (o - o0) * rows;
    float* dst = out + o * oh * ow;
    for (int64_t y = 0; y < oh; ++y) {
      for (int64_t x = 0; x < ow; ++x) {
        dst[y * ow + x] = src[y * rw + x] + b;
      }
    }
  }
}

// Per-thread buffers (thread_scratch): padded images and one block's outputs.
struct DirectBuffers;

}  // namespace

DirectConvWeight::DirectConvWeight(const float* weight, int64_t out_channels, int64_t in_channels)
    : out_channels_(out_channels), in_channels_(in_channels) {
  const int64_t blocks = (out_channels + kBlock - 1) / kBlock;
  const int64_t block_floats = in_channels * kTaps * kBlock;
  blocked_ = memory::HostBuffer<float>(static_cast<size_t>(blocks * block_floats));
  // Only a last, partial block has padding channels to zero.
  if (out_channels % kBlock != 0) {
    std::fill(blocked_.data() + (blocks - 1) * block_floats,
              blocked_.data() + blocks * block_floats, 0.0f);
  }
  // Eager code blocks the weight on every call: ResNet-18's 256-channel 3x3 weight took 0.5 ms
  // of a 1.7 ms layer at batch 1 when this was one thread writing each float 32 bytes after the
  // last across the whole block. Now the threads take blocks, and each channel's 9 x 8 floats
  // are gathered from the block's 8 rows while they sit in L1.
  float* blocked = blocked_.data();
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t rows = std::min<int64_t>(kBlock, out_channels - b * kBlock);
      for (int64_t c = 0; c < in_channels; ++c) {
        float* dst = blocked + (b * in_channels + c) * kTaps * kBlock;
        for (int64_t r = 0; r < rows; ++r) {
          const float* src = weight + ((b * kBlock + r) * in_channels + c) * kTaps;
          for (int t = 0; t < kTaps; ++t) dst[t * kBlock + r] = src[t];
        }
      }
    }
  });
}

namespace {
std::atomic<bool> direct_enabled{true};
}  // namespace

bool direct_conv_enabled() { return direct_enabled.load(std::memory_order_relaxed); }
void set_direct_conv_enabled(bool enabled) { direct_enabled.store(enabled); }

bool direct_conv_fits(const Shape& weight, const Conv2dParams& p, int64_t out_width) {
  return weight.size() == 4 && weight[2] == 3 && weight[3] == 3 && p.stride[0] == p.stride[1] &&
         (p.stride[0] == 1 || p.stride[0] == 2) && p.dilation[0] == 1 && p.dilation[1] == 1 &&
         p.groups == 1 && p.padding[0] <= 2 && p.padding[1] <= 2 && out_width >= 8;
}

void conv2d_direct(const DirectConvWeight& weight, const float* input, int64_t n, int64_t h,
                   int64_t w, const float* bias, float* out, const Conv2dParams& params,
                   const OutputEpilogue& epilogue) {
  const Geometry g{weight.in_channels(), h, w, params.padding[0], params.padding[1],
                   params.stride[0]};
  const int64_t o_total = weight.out_channels(), blocks = (o_total + RO - 1) / RO;
  const int64_t image_in = g.c * h * w, image_out = o_total * g.out_h() * g.out_w();
  const size_t acc_floats = static_cast<size_t>(RO * g.rows_rounded());
  const size_t per_thread = static_cast<size_t>(g.padded_floats()) + acc_floats;
  const int threads = max_threads();
  const int64_t plane_out = g.out_h() * g.out_w();
  auto run_block = [&](const float* padded, int64_t b, float* acc_rows, int64_t image) {
    const int64_t o0 = b * RO, o1 = std::min(o_total, (b + 1) * RO);
    block_kernel(padded, weight.block(b), g, acc_rows);
    write_block(acc_rows, g, o0, o1, bias, out + image * image_out);
    if (epilogue) epilogue(image * image_out + o0 * plane_out, image * image_out + o1 * plane_out);
  };
  if (n >= threads) {
    // Whole images per thread (Note [threads over images or inside the GEMM]).
    float* buffers = thread_scratch<DirectBuffers>(threads * per_thread);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < n; ++i) {
      float* padded = buffers + thread_slot() * per_thread;
      pad_channels(input + i * image_in, g, 0, g.c, padded);
      for (int64_t b = 0; b < blocks; ++b) run_block(padded, b, padded + g.padded_floats(), i);
    }
    return;
  }
  // Fewer images than threads: one padded image shared, the output blocks split.
  float* buffers =
      thread_scratch<DirectBuffers>(static_cast<size_t>(g.padded_floats()) + threads * acc_floats);
  float* padded = buffers;
  for (int64_t i = 0; i < n; ++i) {
    parallel_for(g.c, 1, [&](int64_t c0, int64_t c1) {
      pad_channels(input + i * image_in, g, c0, c1, padded);
    });
#pragma omp parallel for schedule(static) if (!omp_in_parallel())
    for (int64_t b = 0; b < blocks; ++b) {
      float* acc_rows = buffers + g.padded_floats() + thread_slot() * acc_floats;
      run_block(padded, b, acc_rows, i);
    }
  }
}

namespace {

constexpr int kGradO = 4, kGradC = 6;  // the weight gradient's register block

// dY of one image [O][OH][OW] into the row space [O][rows_rounded], zeros past each row's OW.
void pad_grad_rows(const float* dy, const Geometry& g, int64_t o, float* rows) {
  const int64_t rw = g.row_width(), oh = g.out_h(), ow = g.out_w(), r = g.rows_rounded();
  for (int64_t k = 0; k < o; ++k) {
    float* dst = rows + k * r;
    const float* src = dy + k * oh * ow;
    for (int64_t y = 0; y < oh; ++y) {
      std::memcpy(dst + y * rw, src + y * ow, ow * sizeof(float));
      std::fill(dst + y * rw + ow, dst + (y + 1) * rw, 0.0f);
    }
    std::fill(dst + oh * rw, dst + r, 0.0f);
  }
}

// Where a weight-gradient block reads dY: `rows` runs of `row_len` floats per channel, each
// run's inputs `x_row_stride` floats after the previous run's. Either dY copied into the row
// space (one run of rows_rounded() per channel), or, when output rows are whole vectors, dY where
// it lies, a run per output row: no copy, and no products for the thrown-away columns. 16->16
// channels at 32x32, batch 64, 2 threads: 2.66-2.75 -> 2.30-2.57 ms.
struct GradRows {
  const float* data;
  int64_t image_stride, channel_stride, rows, row_stride, row_len, x_row_stride;
};

// dw[(o0 + a) * C * 9 + (c0 + b) * 9 + tap] += sum over the group's images and j of
// dY[o0 + a][j] * X[c0 + b][j + offset(tap)].
template <int NO, int NC>
void weight_grad_block(const GradRows& dy, const float* __restrict padded, const Geometry& g,
                       int64_t images, int64_t o0, int64_t c0, int tap, float* __restrict dw) {
  const int64_t plane = g.plane(), offset = g.offset(tap / 3, tap % 3);
  const int64_t image_in = g.padded_floats();
  Vec acc[NO][NC];
  for (int a = 0; a < NO; ++a)
    for (int b = 0; b < NC; ++b) acc[a][b] = Vec{};
  for (int64_t n = 0; n < images; ++n) {
    for (int64_t y = 0; y < dy.rows; ++y) {
      const float* __restrict d =
          dy.data + n * dy.image_stride + o0 * dy.channel_stride + y * dy.row_stride;
      const float* __restrict x = padded + n * image_in + c0 * plane + offset + y * dy.x_row_stride;
      for (int64_t j = 0; j < dy.row_len; j += kVector) {
        Vec dv[NO];
        for (int a = 0; a < NO; ++a) {
          dv[a] = load_unaligned(d + a * dy.channel_stride + j);
          asm("" : "+v"(dv[a]));  // as for xv below
        }
#pragma GCC unroll 6
        for (int b = 0; b < NC; ++b) {
          Vec xv = load_unaligned(x + b * plane + j);
          // Keeps xv in a register: otherwise GCC folds the load into each of the NO
          // multiply-adds and the loop issues 28 vector loads for 24 multiply-adds, not 10.
          asm("" : "+v"(xv));
          for (int a = 0; a < NO; ++a) acc[a][b] += dv[a] * xv;
        }
      }
    }
  }
  for (int a = 0; a < NO; ++a)
    for (int b = 0; b < NC; ++b) dw[((o0 + a) * g.c + c0 + b) * kTaps + tap] += lane_sum(acc[a][b]);
}

// weight_grad_block<no, nc> for every partial block at the channels' edges.
template <int NO, int NC>
struct WeightGradBlock {
  static constexpr auto fn = &weight_grad_block<NO, NC>;
};
constexpr auto kWeightGradBlocks = block_table<WeightGradBlock, kGradO, kGradC>();

// Images a thread sums before adding the lanes: enough outputs per accumulator that the lane
// sums are a small part of the work, few enough that the group's rows stay in L2.
constexpr int64_t kGradOutputsPerSum = 2048;
constexpr int64_t kGradGroupFloats = 128 * 1024;

struct WeightGradBuffers;

}  // namespace

void conv2d_direct_weight_grad(const float* input, const float* grad_out, int64_t n, int64_t c,
                               int64_t h, int64_t w, int64_t o, const Conv2dParams& params,
                               float* grad_weight) {
  const Geometry g{c, h, w, params.padding[0], params.padding[1], params.stride[0]};
  const int64_t r = g.rows_rounded(), oh = g.out_h(), ow = g.out_w();
  // dY read where it lies (GradRows) when its rows are whole vectors - at least two: with one
  // vector per row (16x16 outputs) the per-row loop cost more than the copy it saved.
  const bool in_place = ow % kVector == 0 && ow >= 2 * kVector;
  const int64_t image_floats = g.padded_floats() + (in_place ? 0 : o * r);
  const int threads = max_threads();
  const int64_t per_thread_images = (n + threads - 1) / threads;
  const int64_t group = std::clamp<int64_t>(
      std::min((kGradOutputsPerSum + r - 1) / r, kGradGroupFloats / image_floats), 1,
      per_thread_images);
  const int64_t dw_floats = o * c * kTaps, per_thread = group * image_floats + dw_floats;
  float* buffers = thread_scratch<WeightGradBuffers>(threads * per_thread);
  for (int t = 0; t < threads; ++t) {
    std::fill(buffers + t * per_thread + group * image_floats, buffers + (t + 1) * per_thread, 0.f);
  }
  const int64_t image_in = c * h * w, image_out = o * oh * ow;
  // A fixed block of images per thread, so that the sums are the same on every run.
  parallel_for(n, 1, [&](int64_t first, int64_t last) {
    float* padded = buffers + thread_slot() * per_thread;
    float* grad_rows = padded + group * g.padded_floats();
    float* dw = padded + group * image_floats;
    for (int64_t n0 = first; n0 < last; n0 += group) {
      const int64_t images = std::min(group, last - n0);
      for (int64_t k = 0; k < images; ++k) {
        pad_channels(input + (n0 + k) * image_in, g, 0, c, padded + k * g.padded_floats());
        if (!in_place) pad_grad_rows(grad_out + (n0 + k) * image_out, g, o, grad_rows + k * o * r);
      }
      const GradRows dy =
          in_place
              ? GradRows{grad_out + n0 * image_out, image_out, oh * ow, oh, ow, ow, g.row_width()}
              : GradRows{grad_rows, o * r, r, 1, 0, r, 0};
      for (int tap = 0; tap < kTaps; ++tap)
        for (int64_t o0 = 0; o0 < o; o0 += kGradO)
          for (int64_t c0 = 0; c0 < c; c0 += kGradC) {
            const int no = static_cast<int>(std::min<int64_t>(kGradO, o - o0));
            const int nc = static_cast<int>(std::min<int64_t>(kGradC, c - c0));
            kWeightGradBlocks[no - 1][nc - 1](dy, padded, g, images, o0, c0, tap, dw);
          }
    }
  });
  for (int64_t i = 0; i < dw_floats; ++i) {
    float total = 0.0f;
    for (int t = 0; t < threads; ++t) total += buffers[t * per_thread + group * image_floats + i];
    grad_weight[i] = total;
  }
}

namespace {

struct StridedGradBuffers;

// One output phase of the strided input gradient: the taps that reach it, where they read dY's
// padded rows, and their weights blocked as [C / RO][O][NT][RO].
struct GradPhase {
  int row, col, taps = 0;
  int64_t offsets[4];
  std::vector<float> blocked;
};

// Phase (a, b) of dX for stride 2, padding 1: dX[c][2Y + a][2X + b] sums W[o][c][i][k] *
// dY[o][Y + dy][X + dx] over the taps with i = a + 1 and k = b + 1 (mod 2), where
// dy = (a + 1 - i) / 2 and dx = (b + 1 - k) / 2, both 0 or 1.
GradPhase grad_phase(const float* weight, int64_t o, int64_t c, const Geometry& g, int a, int b) {
  GradPhase phase;
  phase.row = a;
  phase.col = b;
  int rows[4], cols[4];  // the weight's tap coordinates
  for (int i = 0; i < 3; ++i) {
    if ((i + a + 1) % 2 != 0) continue;
    for (int k = 0; k < 3; ++k) {
      if ((k + b + 1) % 2 != 0) continue;
      rows[phase.taps] = i;
      cols[phase.taps] = k;
      // Tap (ti, tk) of the row space reads dY[Y + ti - 1][X + tk - 1].
      phase.offsets[phase.taps++] = g.offset((a + 1 - i) / 2 + 1, (b + 1 - k) / 2 + 1);
    }
  }
  const int64_t blocks = (c + RO - 1) / RO, nt = phase.taps;
  phase.blocked.assign(static_cast<size_t>(blocks * o * nt * RO), 0.0f);
  for (int64_t ci = 0; ci < c; ++ci)
    for (int64_t oi = 0; oi < o; ++oi)
      for (int t = 0; t < nt; ++t)
        phase.blocked[((ci / RO * o + oi) * nt + t) * RO + ci % RO] =
            weight[((oi * c + ci) * 3 + rows[t]) * 3 + cols[t]];
  return phase;
}

template <int NT>
void phase_kernel(const float* padded, const GradPhase& phase, int64_t block, const Geometry& g,
                  float* acc_rows) {
  int64_t offsets[NT];
  std::copy(phase.offsets, phase.offsets + NT, offsets);
  const int64_t block_floats = g.c * NT * RO;
  block_kernel<NT>(padded, phase.blocked.data() + block * block_floats, g, offsets, acc_rows);
}

// One block of dX's channels [c0, c1) of one image's phase: computed, then written every other
// row and column.
void run_grad_phase(const float* padded, const GradPhase& phase, int64_t block, const Geometry& g,
                    int64_t c, int64_t h, int64_t w, float* acc_rows, float* dx) {
  switch (phase.taps) {
    case 1:
      phase_kernel<1>(padded, phase, block, g, acc_rows);
      break;
    case 2:
      phase_kernel<2>(padded, phase, block, g, acc_rows);
      break;
    default:
      phase_kernel<4>(padded, phase, block, g, acc_rows);
      break;
  }
  const int64_t rw = g.row_width(), rows = g.rows_rounded();
  const int64_t ys = (h - phase.row + 1) / 2, xs = (w - phase.col + 1) / 2;
  const int64_t c0 = block * RO, c1 = std::min(c, c0 + RO);
  for (int64_t ci = c0; ci < c1; ++ci) {
    const float* src = acc_rows + (ci - c0) * rows;
    float* dst = dx + (ci * h + phase.row) * w + phase.col;
    for (int64_t y = 0; y < ys; ++y)
      for (int64_t x = 0; x < xs; ++x) dst[2 * y * w + 2 * x] = src[y * rw + x];
  }
}

}  // namespace

bool direct_strided_input_grad_fits(const Shape& weight, const Conv2dParams& p, int64_t out_width) {
  return direct_conv_fits(weight, p, out_width) && p.stride[0] == 2 && p.padding[0] == 1 &&
         p.padding[1] == 1;
}

void conv2d_direct_strided_input_grad(const float* weight, const float* grad_out, int64_t n,
                                      int64_t o, int64_t c, int64_t h, int64_t w,
                                      float* grad_input) {
  const Geometry g{o, (h - 1) / 2 + 1, (w - 1) / 2 + 1, 1, 1, 1};  // dY's row space
  std::vector<GradPhase> phases;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b) phases.push_back(grad_phase(weight, o, c, g, a, b));
  const int64_t blocks = (c + RO - 1) / RO, image_in = o * g.h * g.w, image_out = c * h * w;
  const size_t acc_floats = static_cast<size_t>(RO * g.rows_rounded());
  const size_t per_thread = static_cast<size_t>(g.padded_floats()) + acc_floats;
  const int threads = max_threads();
  if (n >= threads) {
    float* buffers = thread_scratch<StridedGradBuffers>(threads * per_thread);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < n; ++i) {
      float* padded = buffers + thread_slot() * per_thread;
      pad_channels(grad_out + i * image_in, g, 0, o, padded);
      for (const GradPhase& phase : phases)
        for (int64_t b = 0; b < blocks; ++b)
          run_grad_phase(padded, phase, b, g, c, h, w, padded + g.padded_floats(),
                         grad_input + i * image_out);
    }
    return;
  }
  float* buffers = thread_scratch<StridedGradBuffers>(static_cast<size_t>(g.padded_floats()) +
                                                      threads * acc_floats);
  for (int64_t i = 0; i < n; ++i) {
    parallel_for(o, 1, [&](int64_t o0, int64_t o1) {
      pad_channels(grad_out + i * image_in, g, o0, o1, buffers);
    });
#pragma omp parallel for schedule(static) if (!omp_in_parallel())
    for (int64_t k = 0; k < 4 * blocks; ++k) {
      float* acc_rows = buffers + g.padded_floats() + thread_slot() * acc_floats;
      run_grad_phase(buffers, phases[k / blocks], k % blocks, g, c, h, w, acc_rows,
                     grad_input + i * image_out);
    }
  }
}

}  // namespace wick::cpu
