// register_cuda_kernels: fills the CUDA column of the kernel table and installs the CUDA
// allocator (or, with no device, one that says so). Kernels are registered even without a
// device, so missing_kernels(kCUDA) lists the real coverage of this build.
#include <iostream>

#include "cuda/allocator.h"
#include "cuda/kernels.h"
#include "cuda/runtime.h"

namespace wick {

void register_cuda_kernels(KernelRegistry& registry) {
  cuda::register_elementwise_kernels(registry);
  cuda::register_copy_kernels(registry);
  cuda::register_reduce_kernels(registry);
  cuda::register_index_kernels(registry);
  cuda::register_nn_kernels(registry);
  cuda::register_optim_kernels(registry);
  cuda::register_blas_kernels(registry);
  cuda::register_conv_kernels(registry);
  cuda::install_cuda_allocator();
  // A cuDNN that does not match is refused by the convolutions (with this message); say it at
  // start-up too, so it is not a surprise at the first conv2d.
  if (cuda::device_count_or_zero() > 0) {
    std::string problem = cuda::cudnn_version_problem();
    if (!problem.empty()) std::cerr << "[wick] warning: cuDNN cannot be used: " << problem << "\n";
  }
}

}  // namespace wick
