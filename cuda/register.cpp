// The CUDA backend's description (core/backend.h), installed while libwick loads: its kernels
// fill the CUDA column of the kernel table (even without a device, so missing_kernels(kCUDA)
// lists the real coverage of this build), and its allocator is installed on the first CUDA tensor.
#include <iostream>

#include "core/backend.h"
#include "cuda/allocator.h"
#include "cuda/api.h"
#include "cuda/hooks.h"
#include "cuda/kernels.h"
#include "cuda/runtime.h"

namespace wick::cuda {

namespace {

void register_kernels(KernelRegistry& registry) {
  register_elementwise_kernels(registry);
  register_copy_kernels(registry);
  register_reduce_kernels(registry);
  register_extreme_kernels(registry);
  register_index_kernels(registry);
  register_nn_kernels(registry);
  register_optim_kernels(registry);
  register_blas_kernels(registry);
  register_conv_kernels(registry);
  register_scan_kernels(registry);
  register_rnn_kernels(registry);
  register_attention_kernels(registry);
  register_quantized_kernels(registry);
}

Allocator* first_tensor_allocator() {
  // A cuDNN that does not match is refused by the convolutions (with this message); say it when
  // the first CUDA tensor is made too, so it is not a surprise at the first conv2d.
  if (device_count_or_zero() > 0) {
    std::string problem = cudnn_version_problem();
    if (!problem.empty()) std::cerr << "[wick] warning: cuDNN cannot be used: " << problem << "\n";
  }
  return cuda_backend_allocator();
}

Backend cuda_backend() {
  Backend b;
  b.type = kCUDA;
  b.name = "cuda";
  b.register_kernels = register_kernels;
  b.allocator = first_tensor_allocator;
  b.device_count = [] { return device_count_or_zero(); };
  b.synchronize = [](int device) { cuda::synchronize(device); };
  b.exchange_device = [](int device) {
    int previous = cuda::current_device();
    cuda::set_device(device);
    return previous;
  };
  b.capture_graph = capture_graph;
  b.compile_source = compile_source;
  b.load_kernel = load_kernel;
  b.launch_kernel = launch_kernel;
  return b;
}

const bool registered = register_backend(cuda_backend());

}  // namespace

}  // namespace wick::cuda
