// Checking every CUDA runtime call. A failure throws std::runtime_error naming the call, the file
// and line, and CUDA's own message; the library never aborts.
//
//   WICK_CUDA_CHECK(cudaMemcpyAsync(...));
//   my_kernel<<<grid, block, 0, stream>>>(...);
//   WICK_KERNEL_CHECK();  // a bad launch configuration shows up here
//
// Note [why macros]
// The checks are macros only so that they can capture __FILE__, __LINE__ and the text of the
// call; the work is done by the functions below.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace wick::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line);

inline void check_cuda(cudaError_t error, const char* call, const char* file, int line) {
  if (error != cudaSuccess) [[unlikely]]
    throw_cuda_error(error, call, file, line);
}

// "[cuda] ..." for errors that are not a failed call (no device, wrong device, ...).
[[noreturn]] void throw_no_device(const char* op);

}  // namespace wick::cuda

#define WICK_CUDA_CHECK(call) ::wick::cuda::check_cuda((call), #call, __FILE__, __LINE__)
#define WICK_KERNEL_CHECK() \
  ::wick::cuda::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
