#include "core/cpu/register.h"

namespace wick {

void register_cpu_kernels(KernelRegistry& registry) {
  cpu::register_unary_kernels(registry);
  cpu::register_binary_kernels(registry);
  cpu::register_reduce_kernels(registry);
  cpu::register_copy_kernels(registry);
  cpu::register_random_kernels(registry);
  cpu::register_matmul_kernels(registry);
  cpu::register_index_kernels(registry);
  cpu::register_softmax_kernels(registry);
  cpu::register_conv_kernels(registry);
  cpu::register_pool_kernels(registry);
  cpu::register_norm_kernels(registry);
  cpu::register_optim_kernels(registry);
  cpu::register_scan_kernels(registry);
  cpu::register_rnn_kernels(registry);
  cpu::register_attention_kernels(registry);
  cpu::register_quantized_kernels(registry);
}

}  // namespace wick
