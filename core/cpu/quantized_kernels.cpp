// CPU kernels of the quantized ops (core/ops/quantized.h): quantize / dequantize, and the
// quantized linear layer and convolution, which pack their operands for the int8 GEMM and let it
// requantize (Note [int8 GEMM] in gemm_int8.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/cpu/gemm_int8.h"
#include "core/cpu/loops.h"
#include "core/cpu/register.h"

namespace wick::cpu {

namespace {

// q = clamp(nearbyint(x / scale) + zero_point, lo, hi) in float32; NaN goes to lo.
template <class Q>
void quantize_kernel(const Tensor& in, Tensor& out, const QuantizeParams& p) {
  const float* src = static_cast<const float*>(in.data_ptr());
  Q* dst = static_cast<Q*>(out.data_ptr());
  const float scale = static_cast<float>(p.scale), zero_point = static_cast<float>(p.zero_point);
  const float lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  parallel_for(in.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      float q = std::nearbyint(src[i] / scale) + zero_point;
      if (!(q >= lo)) q = lo;
      if (q > hi) q = hi;
      dst[i] = static_cast<Q>(q);
    }
  });
}

void quantize(const Tensor& in, Tensor& out, const QuantizeParams& p) {
  if (out.dtype() == kUInt8) return quantize_kernel<uint8_t>(in, out, p);
  quantize_kernel<int8_t>(in, out, p);
}

template <class Q>
void dequantize_kernel(const Tensor& in, Tensor& out, const QuantizeParams& p) {
  const Q* src = static_cast<const Q*>(in.data_ptr());
  float* dst = static_cast<float*>(out.data_ptr());
  const float scale = static_cast<float>(p.scale);
  const int32_t zero_point = static_cast<int32_t>(p.zero_point);
  parallel_for(in.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      dst[i] = static_cast<float>(int32_t(src[i]) - zero_point) * scale;
    }
  });
}

void dequantize(const Tensor& in, Tensor& out, const QuantizeParams& p) {
  if (in.dtype() == kUInt8) return dequantize_kernel<uint8_t>(in, out, p);
  dequantize_kernel<int8_t>(in, out, p);
}

// The per-channel float32 multipliers m[o] = float(input_scale) * weight_scale[o].
std::vector<float> multipliers(const Tensor& weight_scale, double input_scale) {
  const float* s = static_cast<const float*>(weight_scale.data_ptr());
  std::vector<float> m(weight_scale.numel());
  for (size_t o = 0; o < m.size(); ++o) m[o] = static_cast<float>(input_scale) * s[o];
  return m;
}

Requantization requantization(const std::vector<float>& m, const Tensor& bias,
                              const QuantizedParams& p) {
  return Requantization{m.data(),
                        bias.defined() ? static_cast<const float*>(bias.data_ptr()) : nullptr,
                        static_cast<int32_t>(p.input_zero_point),
                        static_cast<float>(p.output_scale),
                        static_cast<int32_t>(p.output_zero_point),
                        p.relu};
}

// A growable buffer per thread for the packed columns, kept between calls (as the float GEMM
// keeps its packing buffers: Note [reused packing buffers] in gemm.cpp).
uint8_t* column_buffer(size_t bytes) {
  thread_local std::vector<uint8_t> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

void quantized_linear(const Tensor& input, const Tensor& weight, const Tensor& weight_scale,
                      const Tensor& bias, Tensor& out, const QuantizedParams& p) {
  const int64_t rows = input.size(0), depth = input.size(1), out_features = weight.size(0);
  const Int8Backend backend = int8_backend(depth);
  PackedInt8Weight w(out_features, depth, static_cast<const int8_t*>(weight.data_ptr()), depth,
                     backend);
  std::vector<float> m = multipliers(weight_scale, p.input_scale);
  Requantization rq = requantization(m, bias, p);
  uint8_t* packed = column_buffer(int8_panels(rows) * kInt8Panel * w.padded_depth());
  pack_int8_rows(rows, depth, static_cast<const uint8_t*>(input.data_ptr()), depth,
                 w.padded_depth(), packed);
  // C[o, c] is out[c, o]: a row of C is a column of the output.
  gemm_u8s8_requantize(w, rows, packed, static_cast<uint8_t*>(out.data_ptr()), 1, out_features, rq);
}

// Copies a short run of bytes (an output row: 24 for the MNIST CNN) with fixed-size moves; a
// call to memcpy per run cost more than the copy.
inline void copy_short(uint8_t* dst, const uint8_t* src, int64_t n) {
  if (n >= 16) {
    for (int64_t i = 0; i + 16 <= n; i += 16) std::memcpy(dst + i, src + i, 16);
    std::memcpy(dst + n - 16, src + n - 16, 16);  // the tail, overlapping what was copied
  } else if (n >= 8) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

inline void fill_short(uint8_t* dst, uint8_t value, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = value;
}

// Writes one image's im2col matrix of one group straight into the GEMM's packed column layout:
// k = (c kh + i) kw + j indexes the weight's flattened [C / groups, kh, kw], and column p is the
// output pixel oy * out_w + ox. Four k-rows at a time are built in `rows` (4 x pixels bytes,
// which stay in L1/L2) and zipped into the panels; positions in the padding read as the input
// zero point, which the zero-point correction turns into 0.
struct Im2col {
  int64_t channels, height, width, kh, kw, out_h, out_w;
  const Conv2dParams* conv;
  uint8_t zero_point;

  int64_t pixels() const { return out_h * out_w; }
  int64_t depth() const { return channels * kh * kw; }

  // Row k of the im2col matrix into `row` (pixels() bytes).
  void fill_row(const uint8_t* image, int64_t k, uint8_t* row) const {
    const int64_t c = k / (kh * kw), i = (k / kw) % kh, j = k % kw;
    const uint8_t* plane = image + c * height * width;
    const int64_t sw = conv->stride[1];
    const int64_t x0 = j * conv->dilation[1] - conv->padding[1];  // ix = ox * sw + x0
    // The output columns whose tap lands inside the image: lo <= ox < hi.
    int64_t lo = 0, hi = out_w;
    while (lo < out_w && lo * sw + x0 < 0) ++lo;
    while (hi > lo && (hi - 1) * sw + x0 >= width) --hi;
    for (int64_t oy = 0; oy < out_h; ++oy) {
      uint8_t* out = row + oy * out_w;
      const int64_t iy = oy * conv->stride[0] - conv->padding[0] + i * conv->dilation[0];
      if (iy < 0 || iy >= height) {
        fill_short(out, zero_point, out_w);
        continue;
      }
      const uint8_t* src = plane + iy * width + x0;
      fill_short(out, zero_point, lo);
      if (sw == 1) {
        copy_short(out + lo, src + lo, hi - lo);
      } else {
        for (int64_t ox = lo; ox < hi; ++ox) out[ox] = src[ox * sw];
      }
      fill_short(out + hi, zero_point, out_w - hi);
    }
  }

  // `scratch` holds 4 x pixels() bytes.
  // A 1x1 convolution with stride 1 and no padding reads the image itself: its row k is channel
  // k's plane, so no im2col row is built.
  bool image_is_the_matrix() const {
    return kh == 1 && kw == 1 && conv->stride[0] == 1 && conv->stride[1] == 1 &&
           conv->padding[0] == 0 && conv->padding[1] == 0;
  }

  void pack(const uint8_t* image, int64_t padded_depth, uint8_t* scratch, uint8_t* dst) const {
    const int64_t n = pixels();
    if (image_is_the_matrix()) {
      return pack_int8_depth_major(n, depth(), image, height * width, padded_depth, dst);
    }
    for (int64_t g = 0; g < padded_depth / 4; ++g) {
      const uint8_t* rows[4];
      for (int b = 0; b < 4; ++b) {
        uint8_t* row = scratch + b * n;
        const int64_t k = 4 * g + b;
        if (k < depth()) fill_row(image, k, row);
        rows[b] = k < depth() ? row : nullptr;  // depth padding: zeros
      }
      pack_int8_group(rows, n, padded_depth, g, dst);
    }
  }
};

void quantized_conv2d(const Tensor& input, const Tensor& weight, const Tensor& weight_scale,
                      const Tensor& bias, Tensor& out, const Conv2dParams& conv,
                      const QuantizedParams& p) {
  const int64_t batch = input.size(0), channels = input.size(1), height = input.size(2),
                width = input.size(3);
  const int64_t out_channels = weight.size(0), kh = weight.size(2), kw = weight.size(3);
  const int64_t out_h = out.size(2), out_w = out.size(3), pixels = out_h * out_w;
  const int64_t groups = conv.groups, group_in = channels / groups,
                group_out = out_channels / groups, depth = group_in * kh * kw;
  const Int8Backend backend = int8_backend(depth);
  const int8_t* wdata = static_cast<const int8_t*>(weight.data_ptr());
  std::vector<PackedInt8Weight> packed_weights;
  for (int64_t g = 0; g < groups; ++g) {
    packed_weights.emplace_back(group_out, depth, wdata + g * group_out * depth, depth, backend);
  }
  const int64_t padded_depth = packed_weights[0].padded_depth();
  std::vector<float> m = multipliers(weight_scale, p.input_scale);
  const Im2col im2col{group_in, height, width,
                      kh,       kw,     out_h,
                      out_w,    &conv,  static_cast<uint8_t>(p.input_zero_point)};
  const uint8_t* in = static_cast<const uint8_t*>(input.data_ptr());
  uint8_t* o = static_cast<uint8_t*>(out.data_ptr());
  const size_t packed_bytes = int8_panels(pixels) * kInt8Panel * padded_depth;
  const size_t buffer_bytes = packed_bytes + 4 * pixels;  // + the im2col rows
  auto run_image = [&](int64_t n, uint8_t* packed) {
    for (int64_t g = 0; g < groups; ++g) {
      im2col.pack(in + (n * channels + g * group_in) * height * width, padded_depth,
                  packed + packed_bytes, packed);
      Requantization rq = requantization(m, bias, p);
      rq.multiplier += g * group_out;
      if (rq.bias) rq.bias += g * group_out;
      gemm_u8s8_requantize(packed_weights[g], pixels, packed,
                           o + (n * out_channels + g * group_out) * pixels, pixels, 1, rq);
    }
  };
  // Images in parallel when there are enough of them (each thread packs its own); otherwise one
  // image at a time, the GEMM splitting each product among the threads.
  if (batch >= max_threads() && batch > 1) {
    parallel_for(batch, 1, [&](int64_t begin, int64_t end) {
      uint8_t* packed = column_buffer(buffer_bytes);
      for (int64_t n = begin; n < end; ++n) run_image(n, packed);
    });
  } else {
    uint8_t* packed = column_buffer(buffer_bytes);
    for (int64_t n = 0; n < batch; ++n) run_image(n, packed);
  }
}

}  // namespace

void register_quantized_kernels(KernelRegistry& r) {
  r.add<QuantizeKernel>(OpKey::quantize_per_tensor, kCPU, quantize);
  r.add<QuantizeKernel>(OpKey::dequantize, kCPU, dequantize);
  r.add<QuantizedLinearKernel>(OpKey::quantized_linear, kCPU, quantized_linear);
  r.add<QuantizedConv2dKernel>(OpKey::quantized_conv2d, kCPU, quantized_conv2d);
}

}  // namespace wick::cpu
