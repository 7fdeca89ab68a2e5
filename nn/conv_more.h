// nn::functional, part two for convolution and pooling: the 1-D forms, the transposed
// convolution, adaptive max pooling and unfold/fold (im2col/col2im). All are compositions of
// existing ops (conv2d and its input gradient, the 2-D pools, gather, index_select,
// scatter_add), so their backward comes from autograd and they run on every device.
#pragma once

#include "core/ops.h"

namespace wick::nn::functional {

// input [N, C, L] (or [C, L]), weight [O, C / groups, k]: conv2d over a height-1 image.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              int64_t stride = 1, int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1);

// input [N, Cin, H, W] (or [Cin, H, W]), weight [Cin, Cout / groups, kh, kw], PyTorch's order
// of arguments (output_padding before groups, dilation last). Output size per dim:
// (in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
                        Pair2 stride = 1, Pair2 padding = 0, Pair2 output_padding = 0,
                        int64_t groups = 1, Pair2 dilation = 1);

// Pools over the last dim of [N, C, L] (or [C, L]); stride kStrideOfKernel means kernel_size.
ValuesIndices max_pool1d_with_indices(const Tensor& input, int64_t kernel_size,
                                      int64_t stride = kStrideOfKernel, int64_t padding = 0,
                                      int64_t dilation = 1, bool ceil_mode = false);
Tensor max_pool1d(const Tensor& input, int64_t kernel_size, int64_t stride = kStrideOfKernel,
                  int64_t padding = 0, int64_t dilation = 1, bool ceil_mode = false);
Tensor avg_pool1d(const Tensor& input, int64_t kernel_size, int64_t stride = kStrideOfKernel,
                  int64_t padding = 0, bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool1d(const Tensor& input, int64_t output_size);

// The maximum of each adaptive window (PyTorch's: rows floor(i * H / oh) to
// ceil((i + 1) * H / oh)); indices are flat positions in H * W, as max_pool2d's.
ValuesIndices adaptive_max_pool2d_with_indices(const Tensor& input, Pair2 output_size);
Tensor adaptive_max_pool2d(const Tensor& input, Pair2 output_size);

// im2col: [N, C, H, W] (or [C, H, W]) to [N, C * kh * kw, L] with one column per window.
Tensor unfold(const Tensor& input, Pair2 kernel_size, Pair2 dilation = 1, Pair2 padding = 0,
              Pair2 stride = 1);
// col2im, unfold's adjoint: [N, C * kh * kw, L] (or unbatched) to [N, C, output_size],
// overlapping windows add up.
Tensor fold(const Tensor& input, Pair2 output_size, Pair2 kernel_size, Pair2 dilation = 1,
            Pair2 padding = 0, Pair2 stride = 1);

}  // namespace wick::nn::functional
