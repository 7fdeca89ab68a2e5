// The quantized ops on CUDA (core/ops/quantized.h): straightforward kernels, one thread per
// output, computing the same integers and the same float32 requantization as the CPU
// (requantize() in core/cpu/gemm_int8.cpp). int8 speed is a CPU feature here (Note [int8 GEMM]);
// these kernels exist so a quantized model also runs, exactly, on a GPU. The float operations
// are written with the _rn intrinsics because nvcc would otherwise contract y = acc * m + bias
// into one FMA, which rounds differently from the CPU.
#include "cuda/kernels.h"
#include "cuda/loops.cuh"

namespace wick::cuda {

namespace {

constexpr int kThreads = 256;

struct Requant {
  float input_scale, output_scale;
  int32_t input_zero_point, output_zero_point;
  bool relu;
};

__device__ uint8_t requantize(int32_t acc, float weight_scale, const float* bias, int64_t o,
                              const Requant& r) {
  const float m = __fmul_rn(r.input_scale, weight_scale);
  float y = __fmul_rn(static_cast<float>(acc), m);
  if (bias) y = __fadd_rn(y, bias[o]);
  float q = __fadd_rn(rintf(__fdiv_rn(y, r.output_scale)), static_cast<float>(r.output_zero_point));
  const float lo = r.relu ? static_cast<float>(r.output_zero_point) : 0.0f;
  if (!(q >= lo)) q = lo;
  if (q > 255.0f) q = 255.0f;
  return static_cast<uint8_t>(q);
}

template <class Q>
__global__ void quantize_kernel(const float* in, Q* out, int64_t n, float scale, float zero_point,
                                float lo, float hi) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    float q = __fadd_rn(rintf(__fdiv_rn(in[i], scale)), zero_point);
    if (!(q >= lo)) q = lo;
    if (q > hi) q = hi;
    out[i] = static_cast<Q>(q);
  }
}

template <class Q>
__global__ void dequantize_kernel(const Q* in, float* out, int64_t n, float scale,
                                  int32_t zero_point) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = __fmul_rn(static_cast<float>(int32_t(in[i]) - zero_point), scale);
  }
}

__global__ void linear_kernel(const uint8_t* x, const int8_t* w, const float* w_scale,
                              const float* bias, uint8_t* out, int64_t rows, int64_t depth,
                              int64_t features, Requant r) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * features;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / features, o = i % features;
    int32_t acc = 0;
    for (int64_t k = 0; k < depth; ++k) {
      acc += (int32_t(x[row * depth + k]) - r.input_zero_point) * int32_t(w[o * depth + k]);
    }
    out[i] = requantize(acc, w_scale[o], bias, o, r);
  }
}

struct ConvShape {
  int64_t batch, channels, height, width, out_channels, kh, kw, out_h, out_w, groups;
  Conv2dParams p;
};

__global__ void conv_kernel(const uint8_t* x, const int8_t* w, const float* w_scale,
                            const float* bias, uint8_t* out, ConvShape s, Requant r) {
  const int64_t total = s.batch * s.out_channels * s.out_h * s.out_w;
  const int64_t group_in = s.channels / s.groups, group_out = s.out_channels / s.groups;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t ox = i % s.out_w, oy = (i / s.out_w) % s.out_h;
    const int64_t o = (i / (s.out_w * s.out_h)) % s.out_channels;
    const int64_t n = i / (s.out_w * s.out_h * s.out_channels);
    const int64_t c0 = (o / group_out) * group_in;
    int32_t acc = 0;
    for (int64_t c = 0; c < group_in; ++c) {
      for (int64_t a = 0; a < s.kh; ++a) {
        const int64_t iy = oy * s.p.stride[0] - s.p.padding[0] + a * s.p.dilation[0];
        for (int64_t b = 0; b < s.kw; ++b) {
          const int64_t ix = ox * s.p.stride[1] - s.p.padding[1] + b * s.p.dilation[1];
          if (iy < 0 || iy >= s.height || ix < 0 || ix >= s.width) continue;  // reads as zero
          const int32_t v = x[((n * s.channels + c0 + c) * s.height + iy) * s.width + ix];
          acc += (v - r.input_zero_point) * int32_t(w[((o * group_in + c) * s.kh + a) * s.kw + b]);
        }
      }
    }
    out[i] = requantize(acc, w_scale[o], bias, o, r);
  }
}

Requant requant(const QuantizedParams& p) {
  return Requant{static_cast<float>(p.input_scale), static_cast<float>(p.output_scale),
                 static_cast<int32_t>(p.input_zero_point),
                 static_cast<int32_t>(p.output_zero_point), p.relu};
}

const float* bias_ptr(const Tensor& bias) {
  return bias.defined() ? static_cast<const float*>(bias.data_ptr()) : nullptr;
}

void quantize(const Tensor& in, Tensor& out, const QuantizeParams& p) {
  const int64_t n = in.numel();
  if (n == 0) return;
  LaunchContext ctx(out);
  const float scale = static_cast<float>(p.scale), zero_point = static_cast<float>(p.zero_point);
  const float* src = static_cast<const float*>(in.data_ptr());
  if (out.dtype() == kUInt8) {
    quantize_kernel<uint8_t><<<ctx.blocks_for(n, kThreads), kThreads, 0, ctx.stream()>>>(
        src, static_cast<uint8_t*>(out.data_ptr()), n, scale, zero_point, 0.0f, 255.0f);
  } else {
    quantize_kernel<int8_t><<<ctx.blocks_for(n, kThreads), kThreads, 0, ctx.stream()>>>(
        src, static_cast<int8_t*>(out.data_ptr()), n, scale, zero_point, -128.0f, 127.0f);
  }
  WICK_KERNEL_CHECK();
}

void dequantize(const Tensor& in, Tensor& out, const QuantizeParams& p) {
  const int64_t n = in.numel();
  if (n == 0) return;
  LaunchContext ctx(out);
  const float scale = static_cast<float>(p.scale);
  const int32_t zero_point = static_cast<int32_t>(p.zero_point);
  float* dst = static_cast<float*>(out.data_ptr());
  if (in.dtype() == kUInt8) {
    dequantize_kernel<uint8_t><<<ctx.blocks_for(n, kThreads), kThreads, 0, ctx.stream()>>>(
        static_cast<const uint8_t*>(in.data_ptr()), dst, n, scale, zero_point);
  } else {
    dequantize_kernel<int8_t><<<ctx.blocks_for(n, kThreads), kThreads, 0, ctx.stream()>>>(
        static_cast<const int8_t*>(in.data_ptr()), dst, n, scale, zero_point);
  }
  WICK_KERNEL_CHECK();
}

void quantized_linear(const Tensor& input, const Tensor& weight, const Tensor& weight_scale,
                      const Tensor& bias, Tensor& out, const QuantizedParams& p) {
  const int64_t rows = input.size(0), depth = input.size(1), features = weight.size(0);
  if (rows * features == 0) return;
  LaunchContext ctx(out);
  linear_kernel<<<ctx.blocks_for(rows * features, kThreads), kThreads, 0, ctx.stream()>>>(
      static_cast<const uint8_t*>(input.data_ptr()), static_cast<const int8_t*>(weight.data_ptr()),
      static_cast<const float*>(weight_scale.data_ptr()), bias_ptr(bias),
      static_cast<uint8_t*>(out.data_ptr()), rows, depth, features, requant(p));
  WICK_KERNEL_CHECK();
}

void quantized_conv2d(const Tensor& input, const Tensor& weight, const Tensor& weight_scale,
                      const Tensor& bias, Tensor& out, const Conv2dParams& conv,
                      const QuantizedParams& p) {
  const int64_t total = out.numel();
  if (total == 0) return;
  const ConvShape s{input.size(0),
                    input.size(1),
                    input.size(2),
                    input.size(3),
                    weight.size(0),
                    weight.size(2),
                    weight.size(3),
                    out.size(2),
                    out.size(3),
                    conv.groups,
                    conv};
  LaunchContext ctx(out);
  conv_kernel<<<ctx.blocks_for(total, kThreads), kThreads, 0, ctx.stream()>>>(
      static_cast<const uint8_t*>(input.data_ptr()), static_cast<const int8_t*>(weight.data_ptr()),
      static_cast<const float*>(weight_scale.data_ptr()), bias_ptr(bias),
      static_cast<uint8_t*>(out.data_ptr()), s, requant(p));
  WICK_KERNEL_CHECK();
}

}  // namespace

void register_quantized_kernels(KernelRegistry& r) {
  r.add<QuantizeKernel>(OpKey::quantize_per_tensor, kCUDA, quantize);
  r.add<QuantizeKernel>(OpKey::dequantize, kCUDA, dequantize);
  r.add<QuantizedLinearKernel>(OpKey::quantized_linear, kCUDA, quantized_linear);
  r.add<QuantizedConv2dKernel>(OpKey::quantized_conv2d, kCUDA, quantized_conv2d);
}

}  // namespace wick::cuda
