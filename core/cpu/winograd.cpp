// Winograd F(2x2, 3x3) (Note [Winograd F(2x2, 3x3)] in winograd.h).
#include "core/cpu/winograd.h"

#include <algorithm>

#include "core/cpu/loops.h"
#include "core/error.h"

namespace wick::cpu {

namespace {

constexpr int kPositions = 16;  // of the 4x4 transformed block

// The per-thread buffers (thread_scratch) of the transformed input V and the products M.
struct TransformedInput;
struct Products;

struct Tiling {
  int64_t c, h, w, o, oh, ow, pad_h, pad_w;
  int64_t tiles_h() const { return (oh + 1) / 2; }
  int64_t tiles_w() const { return (ow + 1) / 2; }
  int64_t tiles() const { return tiles_h() * tiles_w(); }
  int64_t span() const { return 2 * tiles_w() + 2; }  // padded input columns the tiles read
};

// V[xi][c][tile] = (B^T d B)[xi] for every 4x4 input block d of channels [c0, c1).
void transform_input(const float* image, const Tiling& s, int64_t c0, int64_t c1, float* v) {
  const int64_t tw = s.tiles_w(), span = s.span(), stride = s.c * s.tiles();
  std::vector<float> rows(4 * span), t(4 * span);
  // Padded column x holds input column x - pad_w: those in the image are [lo, hi).
  const int64_t lo = s.pad_w, hi = std::min(span, s.w + s.pad_w);
  for (int64_t c = c0; c < c1; ++c) {
    const float* channel = image + c * s.h * s.w;
    for (int64_t ty = 0; ty < s.tiles_h(); ++ty) {
      for (int r = 0; r < 4; ++r) {  // the block's input rows, zero-padded
        float* row = rows.data() + r * span;
        const int64_t iy = 2 * ty - s.pad_h + r;
        std::fill(row, row + span, 0.0f);
        if (iy < 0 || iy >= s.h || hi <= lo) continue;
        std::copy(channel + iy * s.w + lo - s.pad_w, channel + iy * s.w + hi - s.pad_w, row + lo);
      }
      const float *d0 = rows.data(), *d1 = d0 + span, *d2 = d1 + span, *d3 = d2 + span;
      float *t0 = t.data(), *t1 = t0 + span, *t2 = t1 + span, *t3 = t2 + span;
      for (int64_t x = 0; x < span; ++x) {  // B^T d, down the columns
        t0[x] = d0[x] - d2[x];
        t1[x] = d1[x] + d2[x];
        t2[x] = d2[x] - d1[x];
        t3[x] = d1[x] - d3[x];
      }
      for (int q = 0; q < 4; ++q) {  // (B^T d) B, along the rows
        const float* tq = t.data() + q * span;
        float* out = v + (q * 4) * stride + c * s.tiles() + ty * tw;
        for (int64_t tx = 0; tx < tw; ++tx) {
          const float a = tq[2 * tx], b = tq[2 * tx + 1], cc = tq[2 * tx + 2], d = tq[2 * tx + 3];
          out[tx] = a - cc;
          out[stride + tx] = b + cc;
          out[2 * stride + tx] = cc - b;
          out[3 * stride + tx] = b - d;
        }
      }
    }
  }
}

// y[o] = A^T m A (+ bias) for output channels [o0, o1), m[xi] = M[xi][o][tile].
void transform_output(const float* m, const float* bias, const Tiling& s, int64_t o0, int64_t o1,
                      float* y) {
  const int64_t tw = s.tiles_w(), stride = s.o * s.tiles();
  std::vector<float> rows(2 * 2 * tw);
  float *y0 = rows.data(), *y1 = y0 + 2 * tw;
  for (int64_t o = o0; o < o1; ++o) {
    const float b = bias != nullptr ? bias[o] : 0.0f;
    for (int64_t ty = 0; ty < s.tiles_h(); ++ty) {
      const float* base = m + o * s.tiles() + ty * tw;
      for (int64_t tx = 0; tx < tw; ++tx) {
        float p[kPositions];
        for (int xi = 0; xi < kPositions; ++xi) p[xi] = base[xi * stride + tx];
        float s0[4], s1[4];  // A^T m, over the block's rows
        for (int k = 0; k < 4; ++k) {
          s0[k] = p[k] + p[4 + k] + p[8 + k];
          s1[k] = p[4 + k] - p[8 + k] - p[12 + k];
        }
        y0[2 * tx] = s0[0] + s0[1] + s0[2] + b;
        y0[2 * tx + 1] = s0[1] - s0[2] - s0[3] + b;
        y1[2 * tx] = s1[0] + s1[1] + s1[2] + b;
        y1[2 * tx + 1] = s1[1] - s1[2] - s1[3] + b;
      }
      float* out = y + (o * s.oh + 2 * ty) * s.ow;
      std::copy(y0, y0 + s.ow, out);
      if (2 * ty + 1 < s.oh) std::copy(y1, y1 + s.ow, out + s.ow);
    }
  }
}

}  // namespace

void winograd_filter(const float* g, float (&u)[16]) {
  double gg[4][3];  // G g
  for (int k = 0; k < 3; ++k) {
    gg[0][k] = g[k];
    gg[1][k] = 0.5 * (double(g[k]) + g[3 + k] + g[6 + k]);
    gg[2][k] = 0.5 * (double(g[k]) - g[3 + k] + g[6 + k]);
    gg[3][k] = g[6 + k];
  }
  for (int r = 0; r < 4; ++r) {  // (G g) G^T
    const double row[4] = {gg[r][0], 0.5 * (gg[r][0] + gg[r][1] + gg[r][2]),
                           0.5 * (gg[r][0] - gg[r][1] + gg[r][2]), gg[r][2]};
    for (int k = 0; k < 4; ++k) u[r * 4 + k] = float(row[k]);
  }
}

bool winograd_fits(const Shape& weight, const Conv2dParams& p) {
  return weight.size() == 4 && weight[2] == 3 && weight[3] == 3 && p.stride[0] == 1 &&
         p.stride[1] == 1 && p.dilation[0] == 1 && p.dilation[1] == 1 && p.groups == 1;
}

WinogradWeight::WinogradWeight(const Tensor& weight) {
  check_type(weight.dtype() == kFloat32 && weight.device().type == kCPU, "WinogradWeight",
             "the weight must be float32 on the CPU; got ", dtype_name(weight.dtype()));
  check_value(weight.dim() == 4 && weight.size(2) == 3 && weight.size(3) == 3, "WinogradWeight",
              "expected a 3x3 weight [O, C, 3, 3]; got ", weight.shape());
  Tensor w = weight.contiguous();
  out_channels_ = w.size(0);
  in_channels_ = w.size(1);
  const int64_t oc = out_channels_ * in_channels_;
  memory::HostBuffer<float> u(static_cast<size_t>(kPositions * oc));
  const float* g = w.data<float>();
  for (int64_t i = 0; i < oc; ++i, g += 9) {
    float filter[kPositions];
    winograd_filter(g, filter);
    for (int xi = 0; xi < kPositions; ++xi) u.data()[static_cast<size_t>(xi * oc + i)] = filter[xi];
  }
  for (int xi = 0; xi < kPositions; ++xi) {
    u_.emplace_back(out_channels_, in_channels_, MatrixRef{u.data() + xi * oc, in_channels_, 1});
  }
}

void conv2d_winograd(const WinogradWeight& weight, const Tensor& input, const Tensor& bias,
                     Tensor& out, const Conv2dParams& params) {
  check_value(input.dim() == 4 && input.size(1) == weight.in_channels_ &&
                  input.dtype() == kFloat32 && input.is_contiguous() && out.dim() == 4 &&
                  out.size(1) == weight.out_channels_ && out.is_contiguous(),
              "conv2d_winograd", "a weight of ", weight.out_channels_, " x ", weight.in_channels_,
              " channels does not fit input ", input.shape(), " and output ", out.shape());
  check_value(winograd_fits({out.size(1), input.size(1), 3, 3}, params) &&
                  out.size(2) == input.size(2) + 2 * params.padding[0] - 2 &&
                  out.size(3) == input.size(3) + 2 * params.padding[1] - 2,
              "conv2d_winograd", "needs stride 1, dilation 1, one group and a matching output");
  const Tiling s{input.size(1), input.size(2), input.size(3),     out.size(1),
                 out.size(2),   out.size(3),   params.padding[0], params.padding[1]};
  const int64_t tiles = s.tiles();
  const float* x = input.data<float>();
  const float* b = bias.defined() ? bias.data<float>() : nullptr;
  float* y = out.data<float>();
  const int64_t v_size = kPositions * s.c * tiles, m_size = kPositions * s.o * tiles;
  const int64_t images = input.size(0), image_in = s.c * s.h * s.w, image_out = s.o * s.oh * s.ow;
  auto products = [&](const float* v, float* m, int xi) {
    gemm_prepacked(weight.u_[static_cast<size_t>(xi)], tiles, 1.0f,
                   MatrixRef{v + xi * s.c * tiles, tiles, 1}, 0.0f,
                   MutableMatrixRef{m + xi * s.o * tiles, tiles, 1});
  };
  const int threads = max_threads();
  if (images >= threads) {
    // Like the im2col kernel's batches (Note [threads over images or inside the GEMM]): each
    // thread takes whole images, with its own slice of one buffer taken before the region.
    float* buffers =
        thread_scratch<TransformedInput>(static_cast<size_t>(threads * (v_size + m_size)));
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t n = 0; n < images; ++n) {
      float* v = buffers + thread_slot() * (v_size + m_size);
      float* m = v + v_size;
      transform_input(x + n * image_in, s, 0, s.c, v);
      for (int xi = 0; xi < kPositions; ++xi) products(v, m, xi);
      transform_output(m, b, s, 0, s.o, y + n * image_out);
    }
    return;
  }
  float* v = thread_scratch<TransformedInput>(static_cast<size_t>(v_size));
  float* m = thread_scratch<Products>(static_cast<size_t>(m_size));
  for (int64_t n = 0; n < images; ++n) {
    parallel_for(s.c, 1,
                 [&](int64_t c0, int64_t c1) { transform_input(x + n * image_in, s, c0, c1, v); });
    // Sixteen independent products: each thread takes whole ones (single-threaded GEMMs inside
    // a parallel region), so no product waits at its own barriers.
#pragma omp parallel for schedule(static) if (!omp_in_parallel())
    for (int xi = 0; xi < kPositions; ++xi) products(v, m, xi);
    parallel_for(s.o, 1, [&](int64_t o0, int64_t o1) {
      transform_output(m, b, s, o0, o1, y + n * image_out);
    });
  }
}

}  // namespace wick::cpu
