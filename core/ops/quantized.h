// Post-training int8 quantization: the ops int8 inference runs on.
//
// A quantized tensor is a plain uint8 or int8 tensor; the affine map that gives it meaning,
//     real = scale * (q - zero_point),
// travels beside it (PyTorch keeps it inside a QTensor; wick keeps tensors plain and passes it
// as attributes, which is also what ONNX's QuantizeLinear / DequantizeLinear do). Activations are
// uint8 with any zero point in [0, 255]; weights are int8, symmetric (zero point 0), with one
// scale per output channel. None of these ops is differentiable: quantization happens after
// training. The fast kernels are the CPU's (core/cpu/quantized_kernels.cpp, core/cpu/gemm_int8.h);
// CUDA runs the same arithmetic with simple kernels (cuda/quantized.cu).
#pragma once

#include "core/kernels.h"
#include "core/ops/nn.h"
#include "core/tensor.h"

namespace wick {

// float32 -> uint8 or int8 (`dtype`): q = clamp(nearbyint(x / scale) + zero_point), rounding half
// to even and saturating to the dtype's range. scale > 0; zero_point within the dtype's range.
Tensor quantize_per_tensor(const Tensor& input, double scale, int64_t zero_point,
                           DType dtype = kUInt8);

// uint8 or int8 -> float32: float(q - zero_point) * float(scale).
Tensor dequantize(const Tensor& input, double scale, int64_t zero_point);

// y = (x - input_zero_point) @ weight^T requantized into uint8 (Note [int8 GEMM]):
//   acc[n, o] = sum_k (x[n, k] - input_zero_point) * weight[o, k]            (exact, int32)
//   m[o]      = float(input_scale) * weight_scale[o]                         (float32)
//   y         = float(acc) * m[o] + bias[o]                                  (float32, no FMA)
//   q         = clamp(nearbyint(y / float(output_scale)) + output_zero_point, lo, 255)
// with lo = output_zero_point when relu, else 0. input: uint8 [..., in]; weight: int8 [out, in];
// weight_scale: float32 [out]; bias: float32 [out] or undefined. Returns uint8 [..., out].
Tensor quantized_linear(const Tensor& input, const Tensor& weight, const Tensor& weight_scale,
                        const Tensor& bias, const QuantizedParams& params);

// The same requantization over a 2-D convolution: input uint8 [N, C, H, W] (or [C, H, W]),
// weight int8 [O, C / groups, kh, kw], weight_scale float32 [O], bias float32 [O] or undefined.
// Padding reads as input_zero_point (the real value 0). Returns uint8 [N, O, out_h, out_w].
Tensor quantized_conv2d(const Tensor& input, const Tensor& weight, const Tensor& weight_scale,
                        const Tensor& bias, Pair2 stride, Pair2 padding, Pair2 dilation,
                        int64_t groups, const QuantizedParams& params);

}  // namespace wick
