// Tensor ops for neural-network layers that have kernels of their own: 2-D convolution, pooling
// and batch normalization. nn/functional.h exposes them (and the composite layers) under
// PyTorch's names.
#pragma once

#include "core/tensor.h"

namespace wick {

// A (height, width) pair that also accepts a single number for both, like PyTorch's int-or-tuple
// arguments: conv2d(x, w, b, /*stride=*/2) or conv2d(x, w, b, {2, 1}).
struct Pair2 {
  int64_t h, w;
  Pair2(int64_t both) : h(both), w(both) {}  // NOLINT: implicit on purpose
  Pair2(int64_t h_, int64_t w_) : h(h_), w(w_) {}
};

// input [N, C, H, W] (or [C, H, W]), weight [O, C / groups, kh, kw], bias [O] or undefined.
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              Pair2 stride = 1, Pair2 padding = 0, Pair2 dilation = 1, int64_t groups = 1);

// A pooling stride of kStrideOfKernel means "equal to the kernel size" (PyTorch's default of
// None). It is not 0: a stride of 0 is a mistake and raises, where it used to silently mean the
// kernel size.
inline constexpr int64_t kStrideOfKernel = -1;

ValuesIndices max_pool2d_with_indices(const Tensor& input, Pair2 kernel_size,
                                      Pair2 stride = kStrideOfKernel, Pair2 padding = 0,
                                      Pair2 dilation = 1, bool ceil_mode = false);
Tensor max_pool2d(const Tensor& input, Pair2 kernel_size, Pair2 stride = kStrideOfKernel,
                  Pair2 padding = 0, Pair2 dilation = 1, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& input, Pair2 kernel_size, Pair2 stride = kStrideOfKernel,
                  Pair2 padding = 0, bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool2d(const Tensor& input, Pair2 output_size);

// input [N, C] or [N, C, ...]; running statistics, weight and bias [C] (each may be undefined).
// In training the batch statistics normalize and the running ones are updated in place.
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum = 0.1,
                  double eps = 1e-5);
// relu(batch_norm(input) + residual) in one pass (Note [batch norm's fused epilogue] in
// core/kernels.h); the residual, of the input's shape, may be undefined. The end of a ResNet block.
Tensor batch_norm_relu(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                       const Tensor& weight, const Tensor& bias, bool training,
                       double momentum = 0.1, double eps = 1e-5, const Tensor& residual = Tensor());

}  // namespace wick
