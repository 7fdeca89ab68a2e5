// The CUDA kernel files and what they share. Each file registers its kernels through one of the
// register_* functions; register.cpp calls them all when the CUDA backend registers.
#pragma once

#include <string>

#include "core/dispatch.h"

namespace wick::cuda {

void register_elementwise_kernels(KernelRegistry& registry);  // elementwise.cu
void register_copy_kernels(KernelRegistry& registry);         // copy.cpp, copy_kernels.cu
void register_reduce_kernels(KernelRegistry& registry);       // reduce.cu
void register_extreme_kernels(KernelRegistry& registry);      // reduce_extreme.cu
void register_index_kernels(KernelRegistry& registry);        // index.cu
void register_nn_kernels(KernelRegistry& registry);           // nn.cu
void register_optim_kernels(KernelRegistry& registry);        // optim.cu
void register_blas_kernels(KernelRegistry& registry);         // blas.cpp
void register_conv_kernels(KernelRegistry& registry);         // cudnn_conv.cpp
void register_scan_kernels(KernelRegistry& registry);         // scan.cu
void register_rnn_kernels(KernelRegistry& registry);          // rnn_kernels.cu (rnn)
void register_attention_kernels(KernelRegistry& registry);    // attention.cu (attention)
void register_quantized_kernels(KernelRegistry& registry);    // quantized.cu (int8 ops)

// fill, arange, uniform and normal (copy_kernels.cu); register_copy_kernels adds them.
void register_random_and_fill_kernels(KernelRegistry& registry);

// Why the cuDNN library found at run time cannot be used, or "" (cudnn_conv.cpp).
std::string cudnn_version_problem();

// The cuDNN paths of softmax, average pooling and batch norm (cudnn_nn.cpp), called first by
// the kernels registered for those ops: each returns false when cuDNN is switched off
// (wick.backends.cudnn.enabled) or cannot take the case, and the hand-written kernel runs.
bool cudnn_softmax(const Tensor& in, Tensor& out, int64_t dim, bool log);
bool cudnn_avg_pool2d(const Tensor& input, Tensor& out, const Pool2dParams& params);
bool cudnn_avg_pool2d_backward(const Tensor& grad_out, Tensor& grad_input,
                               const Pool2dParams& params);
bool cudnn_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                      Tensor& running_mean, Tensor& running_var, Tensor& out, Tensor& save_mean,
                      Tensor& save_invstd, const BatchNormParams& params);
bool cudnn_batch_norm_backward(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                               const Tensor& save_mean, const Tensor& save_invstd,
                               Tensor& grad_input, Tensor& grad_weight, Tensor& grad_bias);

// dst = src (cast to dst's dtype, src broadcast to dst's shape), both on the same CUDA device.
void launch_copy(const Tensor& src, Tensor& dst);
// out[b] = a[b] @ b[b] for integer dtypes (cuBLAS has no integer GEMM); out contiguous.
void launch_integer_bmm(const Tensor& a, const Tensor& b, Tensor& out);

}  // namespace wick::cuda
