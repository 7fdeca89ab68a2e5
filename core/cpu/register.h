// Each CPU kernel file registers its kernels through one of these; register.cpp calls them all.
#pragma once

#include "core/dispatch.h"

namespace wick::cpu {

void register_unary_kernels(KernelRegistry& registry);
void register_binary_kernels(KernelRegistry& registry);
void register_reduce_kernels(KernelRegistry& registry);
void register_copy_kernels(KernelRegistry& registry);
void register_random_kernels(KernelRegistry& registry);
void register_matmul_kernels(KernelRegistry& registry);
void register_index_kernels(KernelRegistry& registry);
void register_softmax_kernels(KernelRegistry& registry);
void register_conv_kernels(KernelRegistry& registry);
void register_pool_kernels(KernelRegistry& registry);
void register_norm_kernels(KernelRegistry& registry);
void register_optim_kernels(KernelRegistry& registry);
void register_scan_kernels(KernelRegistry& registry);
// the fused LSTM/GRU steps (rnn_kernels.cpp)
void register_rnn_kernels(KernelRegistry& registry);
// FlashAttention's blocked softmax (attention_kernels.cpp)
void register_attention_kernels(KernelRegistry& registry);
// int8 inference (quantized_kernels.cpp)
void register_quantized_kernels(KernelRegistry& registry);

}  // namespace wick::cpu
