// The kernel interface: the list of ops that have per-device kernels, and the signature kernels of
// each family share. A device implements an op by registering a function with that signature
// (see core/dispatch.h). Kernels receive tensors whose shapes, dtypes and devices the front
// function already checked; they write into outputs that the front function allocated.
#pragma once

#include <cstdint>
#include <limits>

#include "core/ops/op_list.h"
#include "core/scalar.h"
#include "core/shape.h"

namespace wick {

class Tensor;

// Ops with a kernel table entry, one per row of core/ops/op_list.h (the op table). Ops not listed
// there (var, logsumexp, cat, linear, ...) are composed from these in their front functions, so
// they run on every device with no extra code.
#define WICK_OP_KEY(name, ...) name,
enum class OpKey : uint16_t {
  WICK_UNARY_OPS(WICK_OP_KEY) WICK_BINARY_OPS(WICK_OP_KEY) WICK_KERNEL_OPS(WICK_OP_KEY) kCount
};
#undef WICK_OP_KEY
constexpr int kNumOps = static_cast<int>(OpKey::kCount);

const char* op_name(OpKey op);

// Counter-based random numbers (Philox 4x32-10): element i of a fill uses counter offset + i / 4,
// so the result depends only on (seed, offset), never on how the work was split across threads
// or devices.
struct PhiloxState {
  uint64_t seed = 0;
  uint64_t offset = 0;
};

// The attributes of the unary ops that take any, by name; each op reads only its own (the attrs
// column of its row in core/ops/op_list.h). Plain values, so a CUDA kernel takes them by value.
struct UnaryAttrs {
  double negative_slope = 0.01;  // leaky_relu
  double min =
      -std::numeric_limits<double>::infinity();  // clamp (an infinite bound clamps nothing)
  double max = std::numeric_limits<double>::infinity();
  double exponent = 1.0;  // pow_scalar
  double alpha = 1.0;     // elu
  double beta = 1.0;      // softplus
  double threshold = 20.0;
};

using UnaryKernel = void (*)(const Tensor& in, Tensor& out, const UnaryAttrs& attrs);
using BinaryKernel = void (*)(const Tensor& a, const Tensor& b, Tensor& out);
using WhereKernel = void (*)(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out);
// Reduces `in` over `dims` (sorted) into `out`, which has `in`'s shape with those dims set to 1:
// sum (integers and bool into int64), amax, amin (NaN propagates, as in PyTorch).
using ReduceKernel = void (*)(const Tensor& in, Tensor& out, const DimVec& dims);
// Max or min along `dim` into `values` and int64 `indices` (both with `dim` set to 1).
using ArgReduceKernel = void (*)(const Tensor& in, Tensor& values, Tensor& indices, int64_t dim);
using CopyKernel = void (*)(const Tensor& src, Tensor& dst);  // same shape; any dtypes, strides
using FillKernel = void (*)(Tensor& out, Scalar value);
using ArangeKernel = void (*)(Tensor& out, double start, double step);  // out[i] = start + i*step
// Uniform in [a, b) or normal with mean a and standard deviation b.
using RandomKernel = void (*)(Tensor& out, double a, double b, PhiloxState state);
// out[i] = a[i] @ b[i] for 3-D tensors of any strides; out is contiguous [batch, m, n].
using BmmKernel = void (*)(const Tensor& a, const Tensor& b, Tensor& out);
// index_select: out = in.index_select(dim, index); gather: out = in.gather(dim, index).
// Inclusive scan along `dim` (cumsum, cumprod) of a contiguous `in` into a contiguous `out` of
// the same shape and dtype, accumulating in the compute type.
using ScanKernel = void (*)(const Tensor& in, Tensor& out, int64_t dim);
// Stable sort along `dim` of a contiguous `in` into contiguous `values` and int64 `indices`;
// NaN sorts above every number (last ascending, first descending), as in PyTorch.
using SortKernel = void (*)(const Tensor& in, Tensor& values, Tensor& indices, int64_t dim,
                            bool descending);
using IndexKernel = void (*)(const Tensor& in, int64_t dim, const Tensor& index, Tensor& out);
// self[... index[i] ...] += src[... i ...] along dim.
using ScatterAddKernel = void (*)(Tensor& self, int64_t dim, const Tensor& index,
                                  const Tensor& src);
using SoftmaxKernel = void (*)(const Tensor& in, Tensor& out, int64_t dim);

// 2-D convolution of input [N, C, H, W] with weight [O, C / groups, kh, kw] (cross-correlation,
// as in every framework), output [N, O, out_h, out_w].
struct Conv2dParams {
  int64_t stride[2] = {1, 1};
  int64_t padding[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
  int64_t groups = 1;
};
// `bias` may be undefined. `out` is allocated (contiguous) by the front function.
using Conv2dKernel = void (*)(const Tensor& input, const Tensor& weight, const Tensor& bias,
                              Tensor& out, const Conv2dParams& params);
// Computes the gradients whose output tensor is defined; an undefined one is not needed.
using Conv2dBackwardKernel = void (*)(const Tensor& grad_out, const Tensor& input,
                                      const Tensor& weight, Tensor& grad_input, Tensor& grad_weight,
                                      Tensor& grad_bias, const Conv2dParams& params);

// 2-D pooling windows over input [N, C, H, W]. For adaptive pooling only the output size (the
// `out` tensor's shape) matters and the window fields are unused.
struct Pool2dParams {
  int64_t kernel[2] = {1, 1};
  int64_t stride[2] = {1, 1};
  int64_t padding[2] = {0, 0};
  int64_t dilation[2] = {1, 1};
  bool ceil_mode = false;
  bool count_include_pad = true;  // average pooling: divide by the full window, padding included
};
// `indices` (int64, like out) records, for each output, the flat h * W + w position of the
// maximum within its input plane.
using MaxPool2dKernel = void (*)(const Tensor& input, Tensor& out, Tensor& indices,
                                 const Pool2dParams& params);
using MaxPool2dBackwardKernel = void (*)(const Tensor& grad_out, const Tensor& indices,
                                         Tensor& grad_input, const Pool2dParams& params);
using AvgPool2dKernel = void (*)(const Tensor& input, Tensor& out, const Pool2dParams& params);
using AvgPool2dBackwardKernel = void (*)(const Tensor& grad_out, Tensor& grad_input,
                                         const Pool2dParams& params);

// Batch normalization over input [N, C, ...] per channel C. In training it normalizes with the
// batch statistics, writes save_mean and save_invstd ([C], for backward) and, when the running
// buffers are defined, updates them in place: running = (1 - momentum) * running + momentum *
// batch (the variance unbiased). In evaluation it normalizes with the running statistics.
// weight and bias ([C]) may be undefined (no affine transform).
// Note [batch norm's fused epilogue]: out = relu(bn(x) + residual), with the residual (the input's
// shape) optional and the relu when `relu` is set - the end of a ResNet block in one pass, as
// cuDNN's CUDNN_BATCHNORM_OPS_BN_ADD_ACTIVATION does it. The backward recomputes the relu's mask
// from x (and the residual) instead of keeping the block's output.
struct BatchNormParams {
  bool training = true;
  double momentum = 0.1;
  double eps = 1e-5;
  bool relu = false;
};
using BatchNormKernel = void (*)(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                 Tensor& running_mean, Tensor& running_var, const Tensor& residual,
                                 Tensor& out, Tensor& save_mean, Tensor& save_invstd,
                                 const BatchNormParams& params);
// Training-mode backward (batch statistics); undefined outputs are skipped. bias and residual
// are read only for the relu's mask; grad_residual is the gradient that reaches the residual.
using BatchNormBackwardKernel = void (*)(const Tensor& grad_out, const Tensor& input,
                                         const Tensor& weight, const Tensor& save_mean,
                                         const Tensor& save_invstd, const Tensor& bias,
                                         const Tensor& residual, Tensor& grad_input,
                                         Tensor& grad_weight, Tensor& grad_bias,
                                         Tensor& grad_residual, const BatchNormParams& params);

// One Adam / AdamW update of `param` in place, with its moment estimates, in a single pass:
//   g = grad (+ weight_decay * param, unless decoupled; decoupled: param *= 1 - lr weight_decay)
//   exp_avg = beta1 exp_avg + (1 - beta1) g;  exp_avg_sq = beta2 exp_avg_sq + (1 - beta2) g^2
//   param -= lr / bias_correction1 * exp_avg / (sqrt(exp_avg_sq / bias_correction2) + eps)
// with bias_correction = 1 - beta^step. `step` is the optimizer's count for this parameter, a
// float64 scalar on the CPU (state["step"], already incremented for this update), read when the
// kernel runs - not a number fixed by the caller - so that a replayed training step uses each
// step's own corrections (Note [tracing a training step] in jit/trace.cpp).
struct AdamStepParams {
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled_weight_decay;
};
using AdamStepKernel = void (*)(Tensor& param, const Tensor& grad, Tensor& exp_avg,
                                Tensor& exp_avg_sq, const Tensor& step,
                                const AdamStepParams& params);

// One SGD update in place: d = grad (+ weight_decay * param); with momentum, the buffer becomes
// d on the first step and momentum * buffer + (1 - dampening) d after, and d becomes the buffer
// (or d + momentum * buffer with Nesterov); then param -= lr d. `momentum_buffer` is unused
// (and may be undefined) when momentum is 0.
struct SgdStepParams {
  double lr, momentum, dampening, weight_decay;
  bool nesterov, first_step;
};
using SgdStepKernel = void (*)(Tensor& param, const Tensor& grad, Tensor& momentum_buffer,
                               const SgdStepParams& params);

// The fused pointwise step of a recurrent layer (gate math in core/ops/rnn_math.h). All tensors
// are contiguous and of one dtype; B rows, H units. igates = x W_ih^T + b_ih and hgates =
// h W_hh^T + b_hh come from the two GEMMs, so the kernel only does the elementwise part.
// LSTM: igates, hgates [B, 4H], cx [B, H] -> hy, cy [B, H], workspace [B, 4H] (activated gates).
using LstmCellKernel = void (*)(const Tensor& igates, const Tensor& hgates, const Tensor& cx,
                                Tensor& hy, Tensor& cy, Tensor& workspace);
// d(hy), d(cy) -> d(gates) [B, 4H] (the gradient of both igates and hgates) and d(cx).
using LstmCellBackwardKernel = void (*)(const Tensor& grad_hy, const Tensor& grad_cy,
                                        const Tensor& workspace, const Tensor& cx, const Tensor& cy,
                                        Tensor& grad_gates, Tensor& grad_cx);
// GRU: igates, hgates [B, 3H], hx [B, H] -> hy [B, H], workspace [B, 4H] (r, z, n, hn).
using GruCellKernel = void (*)(const Tensor& igates, const Tensor& hgates, const Tensor& hx,
                               Tensor& hy, Tensor& workspace);
// d(hy) -> d(igates), d(hgates) [B, 3H] and the pointwise part of d(hx) [B, H].
using GruCellBackwardKernel = void (*)(const Tensor& grad_hy, const Tensor& workspace,
                                       const Tensor& hx, Tensor& grad_igates, Tensor& grad_hgates,
                                       Tensor& grad_hx);
// Fused attention (FlashAttention's scheme; Note [blocked attention] in
// core/cpu/attention_kernels.cpp) over query [B, L, E], key [B, S, E] and value [B, S, Ev], all
// contiguous, B being batch times heads:
//   out [B, L, Ev] = softmax(scale * query key^T + mask) value, row-wise over S,
//   logsumexp [B, L] = log sum_j exp(scale * q_i . k_j + mask_ij), the softmax's normaliser.
// `attn_mask` is undefined or a [B, L, S] view (zero strides where it broadcasts) of additive
// values in the query's dtype, -inf where a key is hidden. With is_causal, key j > query i is
// hidden too (the top-left aligned lower triangle, PyTorch's convention when L != S). A row with
// every key hidden gives NaN, as the explicit softmax does.
struct AttentionParams {
  double scale = 1.0;
  bool is_causal = false;
};
using AttentionKernel = void (*)(const Tensor& query, const Tensor& key, const Tensor& value,
                                 const Tensor& attn_mask, Tensor& out, Tensor& logsumexp,
                                 const AttentionParams& params);
// The gradients of the three inputs, recomputing the probabilities tile by tile from `logsumexp`
// (never storing the L x S matrix). grad_query, grad_key, grad_value are contiguous and written.
using AttentionBackwardKernel = void (*)(const Tensor& grad_out, const Tensor& query,
                                         const Tensor& key, const Tensor& value,
                                         const Tensor& attn_mask, const Tensor& out,
                                         const Tensor& logsumexp, Tensor& grad_query,
                                         Tensor& grad_key, Tensor& grad_value,
                                         const AttentionParams& params);

// Quantized tensors are plain uint8 / int8 tensors; the affine map real = scale * (q - zero_point)
// travels beside them as attributes (core/ops/quantized.h).
// quantize_per_tensor: float32 in -> uint8 or int8 out (out's dtype),
//   q = clamp(nearbyint(x / scale) + zero_point) to out's range (round half to even, saturate);
// dequantize: uint8 or int8 in -> float32 out, x = float(q - zero_point) * float(scale).
struct QuantizeParams {
  double scale = 1.0;
  int64_t zero_point = 0;
};
using QuantizeKernel = void (*)(const Tensor& in, Tensor& out, const QuantizeParams& params);

// The requantization of quantized_linear and quantized_conv2d (Note [int8 GEMM] in
// core/cpu/gemm_int8.h): uint8 input with (input_scale, input_zero_point), int8 weight with one
// scale per output channel and zero point 0, float32 bias (or undefined), uint8 output with
// (output_scale, output_zero_point); relu raises the lower clamp to output_zero_point.
struct QuantizedParams {
  double input_scale = 1.0;
  int64_t input_zero_point = 0;
  double output_scale = 1.0;
  int64_t output_zero_point = 0;
  bool relu = false;
};
// input [M, K] (contiguous uint8), weight [N, K] (contiguous int8), weight_scale [N] float32,
// bias [N] float32 or undefined -> out [M, N] uint8, contiguous.
using QuantizedLinearKernel = void (*)(const Tensor& input, const Tensor& weight,
                                       const Tensor& weight_scale, const Tensor& bias, Tensor& out,
                                       const QuantizedParams& params);
// input [N, C, H, W] uint8, weight [O, C / groups, kh, kw] int8 (both contiguous) -> out
// [N, O, out_h, out_w] uint8; padding reads as input_zero_point (the real value 0).
using QuantizedConv2dKernel = void (*)(const Tensor& input, const Tensor& weight,
                                       const Tensor& weight_scale, const Tensor& bias, Tensor& out,
                                       const Conv2dParams& conv, const QuantizedParams& params);

}  // namespace wick
