// CPU 2-D convolution by im2col + GEMM, one image at a time.
//
// Note [im2col per image]
// im2col copies, for every output position, the kh x kw x C input patch it sees into one column
// of a matrix `cols` [C * kh * kw, out_h * out_w]; the convolution is then one GEMM,
// weight [O, C * kh * kw] @ cols. Doing it per image keeps `cols` small enough for the L2 cache
// (a 32-channel 3x3 layer on 26x26 inputs needs 660 KB per image, but 42 MB for a batch of 64)
// and lets OpenMP threads take whole images, each running a single-threaded GEMM, with no
// synchronisation inside the loop. Groups split C and O into independent slices.
#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/cpu/conv_direct.h"
#include "core/cpu/conv_prepacked.h"
#include "core/cpu/gemm.h"
#include "core/cpu/loops.h"
#include "core/cpu/register.h"
#include "core/cpu/vec.h"
#include "core/cpu/winograd_tiles.h"
#include "core/ops.h"

namespace wick::cpu {

namespace {

struct ConvShape {
  int64_t n, c, h, w, o, kh, kw, oh, ow;
  int64_t rows() const { return c * kh * kw; }   // rows of cols
  int64_t positions() const { return oh * ow; }  // columns of cols
};

ConvShape conv_shape(const Tensor& input, const Shape& weight, const Tensor& out) {
  return {input.size(0), input.size(1), input.size(2), input.size(3), weight[0],
          weight[2],     weight[3],     out.size(2),   out.size(3)};
}

// The output columns x whose input column x * stride - pad + tap lies inside [0, width): [lo, hi).
struct ColumnRange {
  int64_t lo, hi;
};
ColumnRange valid_columns(int64_t tap_offset, int64_t stride, int64_t width, int64_t out_width) {
  // x * stride + tap_offset >= 0  and  x * stride + tap_offset < width
  int64_t lo = tap_offset >= 0 ? 0 : (-tap_offset + stride - 1) / stride;
  int64_t hi = tap_offset >= width ? 0 : (width - tap_offset + stride - 1) / stride;
  hi = std::min(hi, out_width);
  return {std::min(lo, hi), hi};
}

constexpr int64_t kShortRow = 16;  // output rows narrower than this are copied value by value

// cols[(c, i, j), (y, x)] = input[c, y * sh - ph + i * dh, x * sw - pw + j * dw] (0 outside),
// for the channels c in [c_begin, c_end).
template <class T>
void im2col_channels(const T* image, const ConvShape& s, const Conv2dParams& p, T* cols,
                     int64_t c_begin, int64_t c_end) {
  const int64_t sw = p.stride[1];
  for (int64_t c = c_begin; c < c_end; ++c) {
    for (int64_t i = 0; i < s.kh; ++i) {
      for (int64_t j = 0; j < s.kw; ++j) {
        T* row = cols + ((c * s.kh + i) * s.kw + j) * s.positions();
        const int64_t tap = j * p.dilation[1] - p.padding[1];
        const ColumnRange valid = valid_columns(tap, sw, s.w, s.ow);
        for (int64_t y = 0; y < s.oh; ++y) {
          int64_t iy = y * p.stride[0] - p.padding[0] + i * p.dilation[0];
          T* out = row + y * s.ow;
          if (s.ow < kShortRow) {
            // Short rows in one loop: GCC turns the fill and copy below into calls of memset and
            // memmove, which for ResNet-18's 7-wide rows cost more than the copying (a sixth of
            // its 7x7 layers' time).
            const bool inside = iy >= 0 && iy < s.h;
            const int64_t lo = inside ? valid.lo : 0, hi = inside ? valid.hi : 0;
            const T* in = image + (c * s.h + (inside ? iy : 0)) * s.w + tap;
            for (int64_t x = 0; x < s.ow; ++x) out[x] = x >= lo && x < hi ? in[x * sw] : T(0);
            continue;
          }
          if (iy < 0 || iy >= s.h) {
            std::fill(out, out + s.ow, T(0));
            continue;
          }
          const T* in = image + (c * s.h + iy) * s.w + tap;
          std::fill(out, out + valid.lo, T(0));
          if (sw == 1) {
            std::copy(in + valid.lo, in + valid.hi, out + valid.lo);
          } else {
            for (int64_t x = valid.lo; x < valid.hi; ++x) out[x] = in[x * sw];
          }
          std::fill(out + valid.hi, out + s.ow, T(0));
        }
      }
    }
  }
}

// All channels; split over the threads when called outside a parallel region (a batch-1
// convolution, Note [threads over images or inside the GEMM]) and the matrix is large.
template <class T>
void im2col(const T* image, const ConvShape& s, const Conv2dParams& p, T* cols) {
  const int64_t per_channel = s.kh * s.kw * s.positions();
  parallel_for(s.c, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(per_channel, 1)),
               [&](int64_t c0, int64_t c1) { im2col_channels(image, s, p, cols, c0, c1); });
}

// Note [im2col inside the packing]
// The float32 forward never writes the im2col matrix: the GEMM asks for it one packed panel at
// a time (PanelSource in gemm.h), and the panel is gathered straight from the image. The matrix
// was written once by im2col and read back once by the packing, a copy of a copy: for a batch-1
// ResNet-18 the first layer's is 7 MB, nine times the image (each input value sits in up to
// kh x kw columns). A panel row holds `width` consecutive output positions of one (c, i, j): a
// few runs along output rows, each a strided read of one input row.
class Im2colPanels final : public PanelSource {
 public:
  Im2colPanels(const float* image, const ConvShape& s, const Conv2dParams& p)
      : image_(image), s_(s), p_(p) {
    for (int64_t j = 0; j < s.kw; ++j) {
      valid_.push_back(valid_columns(j * p.dilation[1] - p.padding[1], p.stride[1], s.w, s.ow));
    }
  }

  // No divisions per row: a panel row is a few dozen floats, and five 64-bit divisions per row
  // took longer than the copying.
  void pack(int64_t p0, int64_t kc, int64_t j0, int64_t cols, int64_t width,
            float* dst) const override {
    struct Run {
      int64_t y, x0, x1, at;  // output row y, columns [x0, x1), written from dst column `at`
    };
    Run runs[64];
    int n_runs = 0;
    for (int64_t l = j0, end = j0 + cols; l < end && n_runs < 64; ++n_runs) {
      const int64_t y = l / s_.ow, x0 = l % s_.ow, x1 = std::min(s_.ow, x0 + (end - l));
      runs[n_runs] = {y * p_.stride[0] - p_.padding[0], x0, x1, l - j0};
      l += x1 - x0;
    }
    const int64_t taps = s_.kh * s_.kw, sw = p_.stride[1];
    int64_t c = p0 / taps, i = p0 % taps / s_.kw, j = p0 % s_.kw;
    for (int64_t r = 0; r < kc; ++r) {
      const int64_t tap = j * p_.dilation[1] - p_.padding[1], dy = i * p_.dilation[0];
      const ColumnRange valid = valid_[static_cast<size_t>(j)];
      const float* channel = image_ + c * s_.h * s_.w;
      float* out = dst + r * width;
      for (int k = 0; k < n_runs; ++k) {
        const Run& run = runs[k];
        const int64_t iy = run.y + dy;
        float* o = out + run.at - run.x0;  // o[x] is output column x of this row
        if (iy < 0 || iy >= s_.h) {
          for (int64_t x = run.x0; x < run.x1; ++x) o[x] = 0.0f;
          continue;
        }
        const float* in = channel + iy * s_.w + tap;
        const int64_t lo = std::clamp(valid.lo, run.x0, run.x1);
        const int64_t hi = std::clamp(valid.hi, lo, run.x1);
        for (int64_t x = run.x0; x < lo; ++x) o[x] = 0.0f;
        if (sw == 1) {
          for (int64_t x = lo; x < hi; ++x) o[x] = in[x];
        } else {
          for (int64_t x = lo; x < hi; ++x) o[x] = in[x * sw];
        }
        for (int64_t x = hi; x < run.x1; ++x) o[x] = 0.0f;
      }
      for (int64_t x = cols; x < width; ++x) out[x] = 0.0f;
      if (++j == s_.kw) {
        j = 0;
        if (++i == s_.kh) i = 0, ++c;
      }
    }
  }

 private:
  const float* image_;
  ConvShape s_;
  Conv2dParams p_;
  std::vector<ColumnRange> valid_;  // per kernel column j
};

struct Im2colMatrix;  // thread_scratch's tag: a thread's im2col matrix (im2col writes all of it)

// The adjoint of im2col: every column entry is added back to the input position it came from.
// Sums go into `image` of the accumulation type (float32 for the 16-bit types).
template <class T, class Acc>
void col2im(const T* cols, const ConvShape& s, const Conv2dParams& p, Acc* image) {
  std::fill(image, image + s.c * s.h * s.w, Acc(0));
  const int64_t sw = p.stride[1];
  for (int64_t c = 0; c < s.c; ++c) {
    for (int64_t i = 0; i < s.kh; ++i) {
      for (int64_t j = 0; j < s.kw; ++j) {
        const T* row = cols + ((c * s.kh + i) * s.kw + j) * s.positions();
        const int64_t tap = j * p.dilation[1] - p.padding[1];
        const ColumnRange valid = valid_columns(tap, sw, s.w, s.ow);
        for (int64_t y = 0; y < s.oh; ++y) {
          int64_t iy = y * p.stride[0] - p.padding[0] + i * p.dilation[0];
          if (iy < 0 || iy >= s.h) continue;
          Acc* in = image + (c * s.h + iy) * s.w + tap;
          const T* from = row + y * s.ow;
          for (int64_t x = valid.lo; x < valid.hi; ++x) in[x * sw] += Acc(from[x]);
        }
      }
    }
  }
}

// Note [threads over images or inside the GEMM]
// With at least as many images as threads, each thread takes whole images and runs
// single-threaded GEMMs (gemm() does not split work inside a parallel region). With fewer - batch
// 1 inference - that would leave threads idle, so the images are taken one at a time, outside any
// parallel region, and each GEMM splits its own work over every thread. (Inside an inactive
// `omp parallel if (false)` region the GEMM's team would be a nested one, which libgomp starts
// afresh each time while the main team's idle threads spin: slower than one thread.)
// ResNet-18 at batch 1 on 2 threads: 69 ms before, 39 ms after (PyTorch 1.13: 28 ms), measured
// by benchmarks/resnet_vs_pytorch.py.
template <class Body>
void for_each_image(int64_t images, const Body& body) {
  const int threads = max_threads();
  if (images < threads) {
    for (int64_t n = 0; n < images; ++n) body(n, 0);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int t = thread_slot();
    // Static: a fixed block of images per thread, so per-thread sums add up in the same order
    // on every run (the weight gradient below).
#pragma omp for schedule(static)
    for (int64_t n = 0; n < images; ++n) body(n, t);
  }
}

// Note [few positions: the product transposed]
// A convolution's GEMM is normally weight [O, C*kh*kw] @ cols [C*kh*kw, positions]: the weight
// is A, packed into 12-row panels, and the positions are B's columns, 32 to a panel. ResNet-18's
// last stage at batch 1 has 49 positions and a 512 x 4608 weight (9 MB): each A panel, read from
// memory, then served only two B panels, the second one 17/32 full, and the GEMM ran at 60% of
// its speed on square products. Transposed, Y^T = cols^T @ W^T, the weight is B: each of its
// panels, packed just before use, serves seven 8-row panels of positions (49 of 56 rows used),
// and the threads split the weight between them (Note [few rows: threads split the columns] in
// gemm.cpp). The 512 -> 512 7x7 layer at batch 1, three runs each (separate processes,
// interleaved): on 1 thread 5.3-6.4 -> 4.1-4.9 ms, on 2 threads 2.5-2.9 -> 1.7-2.3 ms
// (PyTorch 1.13, alone in its process: 1.4-1.9 ms). A frozen graph keeps the usual orientation:
// its weight is packed as A once, ahead of time (Note [weights packed ahead of time]).
constexpr int64_t kTransposedMaxPositions = 64;
bool transposed_product_fits(const ConvShape& s, int64_t og) {
  // One image only: transposed, each image's product packs the whole weight again, where the
  // usual orientation packs it once for the batch. The 512 -> 512 7x7 layer at batch 8: 26-32
  // against 35-38 ms on one thread, 15-22 against 20-26 on two.
  return s.n == 1 && s.positions() < kTransposedMaxPositions && og >= 4 * kTransposedMaxPositions;
}

// Note [Winograd over blocks of 16 tiles]: on AVX-512 builds, with 16 or more channels each
// way, where it measured faster than the direct convolution. Turning the direct convolution off
// turns this off too: im2col + GEMM is then the reference for every 3x3 convolution.
bool winograd_tiles_chosen(const Shape& weight, const Conv2dParams& p, int64_t n, int64_t h,
                           int64_t w) {
  constexpr int64_t kMinChannels = 16;
  return kVector == 16 && winograd_tiles_enabled() && direct_conv_enabled() && weight.size() == 4 &&
         weight[0] >= kMinChannels && weight[1] >= kMinChannels &&
         winograd_tiles_fits(weight, p, n, h, w);
}

// `w` is the weight (of shape `weight`), read only when `prepacked` is null; `prepacked` is the
// float32 weight already packed per group (PackedConvWeight).
template <class T>
void conv_forward(const Tensor& input, const Shape& weight, const T* w, const Tensor& bias,
                  Tensor& out, const Conv2dParams& p, const std::vector<PackedA>* prepacked) {
  ConvShape s = conv_shape(input, weight, out);
  const int64_t g = p.groups, og = s.o / g, kg = s.rows() / g, L = s.positions();
  const T* x = static_cast<const T*>(input.data_ptr());
  const T* b = bias.defined() ? static_cast<const T*>(bias.data_ptr()) : nullptr;
  T* y = static_cast<T*>(out.data_ptr());
  if constexpr (std::is_same_v<T, float>) {
    // Note [direct convolution over padded rows]; a frozen graph's weight comes prepacked.
    if (prepacked == nullptr && winograd_tiles_chosen(weight, p, s.n, s.h, s.w)) {
      conv2d_winograd_tiles(w, s.o, s.c, x, s.n, s.h, s.w, b, y);
      return;
    }
    if (prepacked == nullptr && direct_conv_enabled() && direct_conv_fits(weight, p, s.ow)) {
      conv2d_direct(DirectConvWeight(w, s.o, s.c), x, s.n, s.h, s.w, b, y, p);
      return;
    }
  }
  // Note [few positions: the product transposed]
  const bool transposed =
      std::is_same_v<T, float> && prepacked == nullptr && transposed_product_fits(s, og);
  // float32 weights are packed for the GEMM once, not once per image (Note [a weight packed once]).
  std::vector<PackedA> packed_here;
  if constexpr (std::is_same_v<T, float>) {
    if (prepacked == nullptr && !transposed) {
      for (int64_t k = 0; k < g; ++k)
        packed_here.emplace_back(og, kg, MatrixRef{w + k * og * kg, kg, 1});
      prepacked = &packed_here;
    }
  }
  // Note [im2col inside the packing] pays when an output row fills much of a panel; with rows
  // of a few positions (ResNet-18's 7x7 layers: a 32-column panel row is five runs of at most
  // seven values) the per-run bookkeeping costs more than writing the matrix and copying it.
  const bool gather = std::is_same_v<T, float> && s.ow >= kShortRow && !transposed;
  // One buffer for every thread's matrix, taken before any parallel region (which must not throw).
  const int threads = s.n < max_threads() ? 1 : max_threads();
  const int64_t matrix = gather ? 0 : s.rows() * L;
  T* all_cols =
      gather ? nullptr : thread_scratch<Im2colMatrix, T>(static_cast<size_t>(threads * matrix));
  for_each_image(s.n, [&](int64_t n, int t) {
    const T* xn = x + n * s.c * s.h * s.w;
    T* yn = y + n * s.o * L;
    T* cols = gather ? nullptr : all_cols + t * matrix;
    if (!gather) im2col(xn, s, p, cols);
    for (int64_t k = 0; k < g; ++k) {
      if constexpr (std::is_same_v<T, float>) {
        if (transposed) {  // Y^T [L, og] = cols^T [L, kg] @ W^T [kg, og]
          gemm<T>(L, og, kg, 1.0, {cols + k * kg * L, 1, L}, {w + k * og * kg, 1, kg}, 0.0,
                  {yn + k * og * L, 1, L});
        } else if (gather) {
          ConvShape group = s;
          group.c = s.c / g;
          const Im2colPanels panels(xn + k * group.c * s.h * s.w, group, p);
          gemm_prepacked((*prepacked)[k], L, 1.0f, panels, 0.0f, {yn + k * og * L, L, 1});
        } else {
          gemm_prepacked((*prepacked)[k], L, 1.0f, {cols + k * kg * L, L, 1}, 0.0f,
                         {yn + k * og * L, L, 1});
        }
      } else {
        gemm<T>(og, L, kg, 1.0, {w + k * og * kg, kg, 1}, {cols + k * kg * L, L, 1}, 0.0,
                {yn + k * og * L, L, 1});
      }
    }
    if (b != nullptr) {
      // Split over the threads when this image is not already one thread's (batch 1).
      parallel_for(s.o, std::max<int64_t>(1, kParallelGrain / L), [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o) {
          for (int64_t l = 0; l < L; ++l) yn[o * L + l] = T(compute_t<T>(yn[o * L + l]) + b[o]);
        }
      });
    }
  });
}

// The sum of `len` values: float32 in four vector accumulators (independent adds), the other
// types one by one in their compute type.
template <class T>
compute_t<T> row_sum(const T* v, int64_t len) {
  if constexpr (std::is_same_v<T, float>) {
    Vec acc[4] = {};
    int64_t l = 0;
    for (; l + 4 * kVector <= len; l += 4 * kVector) {
      for (int u = 0; u < 4; ++u) acc[u] += load_unaligned(v + l + u * kVector);
    }
    for (; l + kVector <= len; l += kVector) acc[0] += load_unaligned(v + l);
    float total = lane_sum((acc[0] + acc[1]) + (acc[2] + acc[3]));
    for (; l < len; ++l) total += v[l];
    return total;
  } else {
    compute_t<T> total = 0;
    for (int64_t l = 0; l < len; ++l) total += compute_t<T>(v[l]);
    return total;
  }
}

// Below 16x16 outputs per image the direct weight gradient's lane sums and short rows cost as
// much as im2col's copy (64->64 channels at 8x8: 2.6 against 2.6 ms; 32->64 at stride 2 from
// 16x16: 1.7 against 1.4 ms), so those stay with im2col + GEMM.
constexpr int64_t kMinDirectWeightGradOutputs = 256;

template <class T>
void conv_backward(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                   Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias,
                   const Conv2dParams& p) {
  ConvShape s = conv_shape(input, weight.shape(), grad_out);
  const int64_t g = p.groups, og = s.o / g, kg = s.rows() / g, L = s.positions();
  const T* x = static_cast<const T*>(input.data_ptr());
  const T* w = static_cast<const T*>(weight.data_ptr());
  const T* dy = static_cast<const T*>(grad_out.data_ptr());
  T* dx = grad_input.defined() ? static_cast<T*>(grad_input.data_ptr()) : nullptr;
  const int threads = max_threads();
  // Each thread sums its images' weight gradients into its own buffer; they are added at the end.
  // for_each_image deals the images out statically (a fixed block per thread), so with a given
  // thread count every run adds the same numbers in the same order: the same seed gives the same
  // training run.
  using Acc = compute_t<T>;  // float32 for the 16-bit types
  std::vector<std::vector<Acc>> partial_dw(grad_weight.defined() ? threads : 0);
  std::vector<std::vector<T>> cols(threads);
  std::vector<std::vector<Acc>> image_acc(threads);
  // Note [input gradient as a convolution]
  // With stride 1, no dilation and one group, dX is itself a convolution: of dY, padded by
  // k - 1 - padding, with the weight flipped in both spatial dims and its two channel dims swapped.
  // That is one im2col of dY and a GEMM of the forward's shape (C x O*kh*kw by O*kh*kw x H*W),
  // instead of a GEMM with only O in its inner dimension, whose whole C*kh*kw x H*W result is
  // written out and then scattered back by col2im. ResNet's 3x3 convolutions are all of this kind
  // but the two strided ones; benchmarks/resnet_layers.py measures the difference.
  const bool dx_as_conv = dx != nullptr && g == 1 && p.stride[0] == 1 && p.stride[1] == 1 &&
                          p.dilation[0] == 1 && p.dilation[1] == 1 && p.padding[0] < s.kh &&
                          p.padding[1] < s.kw;
  const ConvShape ts{s.n, s.o, s.oh, s.ow, s.c, s.kh, s.kw, s.h, s.w};  // dY -> dX
  Conv2dParams tp;
  tp.padding[0] = s.kh - 1 - p.padding[0];
  tp.padding[1] = s.kw - 1 - p.padding[1];
  std::vector<T> flipped;  // [C, O, kh, kw]
  if (dx_as_conv) {
    flipped.resize(s.c * s.o * s.kh * s.kw);
    for (int64_t o = 0; o < s.o; ++o)
      for (int64_t c = 0; c < s.c; ++c)
        for (int64_t i = 0; i < s.kh; ++i)
          for (int64_t j = 0; j < s.kw; ++j)
            flipped[((c * s.o + o) * s.kh + (s.kh - 1 - i)) * s.kw + (s.kw - 1 - j)] =
                w[((o * s.c + c) * s.kh + i) * s.kw + j];
  }
  std::vector<PackedA> packed_flipped;  // float32: packed once for every image
  bool dx_direct = false;               // ... or run for all images at once (direct, Winograd)
  bool dw_done = false;                 // ... for all images at once (Winograd, direct)
  if constexpr (std::is_same_v<T, float>) {
    // Note [Winograd's weight gradient over tiles], else Note [weight gradient over padded rows]
    if (grad_weight.defined() && winograd_tiles_chosen(weight.shape(), p, s.n, s.h, s.w) &&
        winograd_tiles_weight_grad_fits(weight.shape(), p, s.n, s.h, s.w)) {
      conv2d_winograd_tiles_weight_grad(x, s.n, s.c, s.h, s.w, dy, s.o,
                                        static_cast<float*>(grad_weight.data_ptr()));
      dw_done = true;
    } else if (grad_weight.defined() && direct_conv_enabled() && s.n >= threads &&
               s.oh * s.ow >= kMinDirectWeightGradOutputs &&
               direct_conv_fits(weight.shape(), p, s.ow)) {
      conv2d_direct_weight_grad(x, dy, s.n, s.c, s.h, s.w, s.o, p,
                                static_cast<float*>(grad_weight.data_ptr()));
      dw_done = true;
    }
    const bool dx_winograd =
        dx_as_conv && winograd_tiles_chosen({s.c, s.o, s.kh, s.kw}, tp, s.n, s.oh, s.ow);
    dx_direct = dx_winograd || (dx_as_conv && direct_conv_enabled() &&
                                direct_conv_fits({s.c, s.o, s.kh, s.kw}, tp, s.w));
    // Note [strided input gradient by output phases]
    if (dx != nullptr && !dx_as_conv && direct_conv_enabled() &&
        direct_strided_input_grad_fits(weight.shape(), p, s.ow)) {
      conv2d_direct_strided_input_grad(w, dy, s.n, s.o, s.c, s.h, s.w, dx);
      dx_direct = true;
    } else if (dx_winograd) {
      conv2d_winograd_tiles(flipped.data(), s.c, s.o, dy, s.n, s.oh, s.ow, nullptr, dx);
    } else if (dx_direct) {
      conv2d_direct(DirectConvWeight(flipped.data(), s.c, s.o), dy, s.n, s.oh, s.ow, nullptr, dx,
                    tp);
    } else if (dx_as_conv) {
      packed_flipped.emplace_back(s.c, ts.rows(), MatrixRef{flipped.data(), ts.rows(), 1});
    }
  }
  const int64_t cols_size =
      std::max(s.rows() * L, dx_as_conv && !dx_direct ? ts.rows() * ts.positions() : 0);
  for_each_image(s.n, [&](int64_t n, int t) {
    cols[t].resize(cols_size);
    const T* dyn = dy + n * s.o * L;
    if (grad_weight.defined() && !dw_done) {
      partial_dw[t].resize(s.o * kg, Acc(0));
      im2col(x + n * s.c * s.h * s.w, s, p, cols[t].data());
      for (int64_t k = 0; k < g; ++k) {  // dW_k += dY_k [og, L] @ cols_k^T [L, kg]
        gemm<T, Acc>(og, kg, L, 1.0, {dyn + k * og * L, L, 1}, {cols[t].data() + k * kg * L, 1, L},
                     1.0, {partial_dw[t].data() + k * og * kg, kg, 1});
      }
    }
    if (dx_direct) {
      // done above
    } else if (dx_as_conv) {
      im2col(dyn, ts, tp, cols[t].data());
      if constexpr (std::is_same_v<T, float>) {
        gemm_prepacked(packed_flipped[0], ts.positions(), 1.0f, {cols[t].data(), ts.positions(), 1},
                       0.0f, {dx + n * s.c * s.h * s.w, s.h * s.w, 1});
      } else {
        gemm<T>(s.c, ts.positions(), ts.rows(), 1.0, {flipped.data(), ts.rows(), 1},
                {cols[t].data(), ts.positions(), 1}, 0.0, {dx + n * s.c * s.h * s.w, s.h * s.w, 1});
      }
    } else if (dx != nullptr) {
      for (int64_t k = 0; k < g; ++k) {  // dcols_k = W_k^T [kg, og] @ dY_k [og, L]
        gemm<T>(kg, L, og, 1.0, {w + k * og * kg, 1, kg}, {dyn + k * og * L, L, 1}, 0.0,
                {cols[t].data() + k * kg * L, L, 1});
      }
      T* dxn = dx + n * s.c * s.h * s.w;
      if constexpr (std::is_same_v<T, Acc>) {
        col2im(cols[t].data(), s, p, dxn);
      } else {
        image_acc[t].resize(s.c * s.h * s.w);
        col2im(cols[t].data(), s, p, image_acc[t].data());
        for (int64_t i = 0; i < s.c * s.h * s.w; ++i) dxn[i] = T(image_acc[t][i]);
      }
    }
  });
  if (grad_weight.defined() && !dw_done) {
    T* dw = static_cast<T*>(grad_weight.data_ptr());
    for (int64_t i = 0; i < s.o * kg; ++i) {
      Acc total = 0;
      for (const auto& part : partial_dw) total += part.empty() ? Acc(0) : part[i];
      dw[i] = T(total);
    }
  }
  if (grad_bias.defined()) {
    // Channels split over the threads, each channel summed in one fixed order. A scalar
    // double loop over every element took 1.7 of the MNIST CNN's first convolution's 3.2 ms
    // (forward + backward, batch 64): one add per four cycles, waiting on the previous one.
    T* db = static_cast<T*>(grad_bias.data_ptr());
    parallel_for(s.o, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(s.n * L, 1)),
                 [&](int64_t o0, int64_t o1) {
                   for (int64_t o = o0; o < o1; ++o) {
                     accumulate_t<T> acc = 0;
                     for (int64_t n = 0; n < s.n; ++n) acc += row_sum(dy + (n * s.o + o) * L, L);
                     db[o] = T(acc);
                   }
                 });
  }
}

void conv2d_kernel(const Tensor& input, const Tensor& weight, const Tensor& bias, Tensor& out,
                   const Conv2dParams& p) {
  visit_floating("conv2d", input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    conv_forward<T>(input, weight.shape(), static_cast<const T*>(weight.data_ptr()), bias, out, p,
                    nullptr);
  });
}

void conv2d_backward_kernel(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                            Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias,
                            const Conv2dParams& p) {
  visit_floating("conv2d_backward", input.dtype(), [&](auto tag) {
    conv_backward<typename decltype(tag)::type>(grad_out, input, weight, grad_input, grad_weight,
                                                grad_bias, p);
  });
}

}  // namespace

// Winograd's GEMMs have one column per 2x2 output tile; with fewer tiles than this the
// micro-kernel's 32-column panels run mostly empty and im2col is faster (a 7x7 output has 16).
constexpr int64_t kMinWinogradTiles = 32;
// With whole images per thread (a batch), Winograd's inner dimension is C alone, against im2col's
// 9 C: below 64 channels its GEMMs are bound by storing their tiles and its transforms by memory.
// ResNet-20 (16-64 channels) at batch 64 ran 52 ms with im2col and 67 ms with Winograd; at batch
// 1, where im2col's thin GEMMs are split over the threads, Winograd was faster (2.7 vs 4.8 ms).
constexpr int64_t kMinWinogradChannelsBatched = 64;
// Elements per thread below which an epilogue over a whole output runs on one thread.
constexpr int64_t kEpilogueGrain = 1 << 14;

PackedConvWeight::PackedConvWeight(const Tensor& weight, const Conv2dParams& params,
                                   const Shape& input_shape, bool allow_winograd)
    : shape_(weight.shape()) {
  check_type(weight.dtype() == kFloat32 && weight.device().type == kCPU, "PackedConvWeight",
             "the weight must be float32 on the CPU; got ", dtype_name(weight.dtype()), " on ",
             weight.device().str());
  const int64_t groups = params.groups;
  check_value(
      weight.dim() == 4 && groups > 0 && weight.size(0) % groups == 0 && input_shape.size() == 4,
      "PackedConvWeight",
      "expected a weight [O, C / groups, kh, kw] with O divisible by groups and an input "
      "[N, C, H, W]; got shapes ",
      weight.shape(), " and ", input_shape, ", groups ", groups);
  const int64_t out_h = input_shape[2] + 2 * params.padding[0] - 2;
  const int64_t out_w = input_shape[3] + 2 * params.padding[1] - 2;
  const bool batched = input_shape[0] >= max_threads();
  if (allow_winograd && winograd_fits(shape_, params) &&
      (out_h + 1) / 2 * ((out_w + 1) / 2) >= kMinWinogradTiles &&
      (!batched || shape_[1] >= kMinWinogradChannelsBatched)) {
    winograd_ = std::make_unique<WinogradWeight>(weight);
    return;
  }
  Tensor w = weight.contiguous();
  const int64_t strided_out_w = (input_shape[3] + 2 * params.padding[1] - 3) / params.stride[1] + 1;
  if (direct_conv_enabled() && direct_conv_fits(shape_, params, strided_out_w)) {
    direct_ = std::make_unique<DirectConvWeight>(w.data<float>(), w.size(0), w.size(1));
    return;
  }
  const int64_t og = w.size(0) / groups, kg = w.size(1) * w.size(2) * w.size(3);
  const float* data = w.data<float>();
  for (int64_t k = 0; k < groups; ++k)
    groups_.emplace_back(og, kg, MatrixRef{data + k * og * kg, kg, 1});
}

void conv2d_prepacked(const PackedConvWeight& weight, const Tensor& input, const Tensor& bias,
                      Tensor& out, const Conv2dParams& params, const OutputEpilogue& epilogue) {
  // Winograd and im2col + GEMM finish the output as a whole; the epilogue then makes one pass.
  auto whole_output_epilogue = [&] {
    if (epilogue) parallel_for(out.numel(), kEpilogueGrain, epilogue);
  };
  if (weight.winograd() != nullptr) {
    conv2d_winograd(*weight.winograd(), input, bias, out, params);
    return whole_output_epilogue();
  }
  const Shape& w = weight.shape();
  if (weight.direct() != nullptr) {
    const DirectConvWeight& d = *weight.direct();
    check_value(
        input.dim() == 4 && input.size(1) == d.in_channels() && input.dtype() == kFloat32 &&
            input.is_contiguous() && out.dim() == 4 && out.size(1) == d.out_channels() &&
            out.is_contiguous() && direct_conv_fits(w, params, out.size(3)) &&
            out.size(2) == (input.size(2) + 2 * params.padding[0] - 3) / params.stride[0] + 1 &&
            out.size(3) == (input.size(3) + 2 * params.padding[1] - 3) / params.stride[1] + 1,
        "conv2d_prepacked", "the packed weight ", w, " does not fit input ", input.shape(),
        " and output ", out.shape());
    return conv2d_direct(d, input.data<float>(), input.size(0), input.size(2), input.size(3),
                         bias.defined() ? bias.data<float>() : nullptr, out.data<float>(), params,
                         epilogue);
  }
  check_value(static_cast<int64_t>(weight.groups().size()) == params.groups && input.dim() == 4 &&
                  input.size(1) == w[1] * params.groups && input.dtype() == kFloat32 &&
                  input.is_contiguous() && out.size(1) == w[0],
              "conv2d_prepacked", "the packed weight ", w, " with groups ", weight.groups().size(),
              " does not fit input ", input.shape(), " (groups ", params.groups, ") and output ",
              out.shape());
  conv_forward<float>(input, w, nullptr, bias, out, params, &weight.groups());
  whole_output_epilogue();
}

void register_conv_kernels(KernelRegistry& r) {
  r.add<Conv2dKernel>(OpKey::conv2d, kCPU, conv2d_kernel);
  r.add<Conv2dBackwardKernel>(OpKey::conv2d_backward, kCPU, conv2d_backward_kernel);
}

}  // namespace wick::cpu
