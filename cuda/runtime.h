// The CUDA runtime as the rest of cuda/ uses it: raw streams, the device a tensor lives on, and a
// launch context that makes that device current and finds the stream to queue work on.
#pragma once

#include <cuda_runtime.h>

#include "core/tensor.h"
#include "cuda/api.h"
#include "cuda/check.h"

namespace wick::cuda {

// This thread's current stream on `device` (nullptr: the legacy default stream).
cudaStream_t current_raw_stream(int device);
// Number of devices, 0 when there is none; `error` receives CUDA's reason then.
int device_count_or_zero(std::string* error = nullptr);
// Throws "[op] ... is on cpu, expected a CUDA tensor" unless `t` is on a CUDA device.
void check_cuda_tensor(const char* op, const Tensor& t);
int multiprocessor_count(int device);

// Everything a kernel launcher needs: the tensor's device made current for the launcher's scope,
// and the stream to launch on.
class LaunchContext {
 public:
  explicit LaunchContext(const Tensor& t);
  explicit LaunchContext(int device);
  cudaStream_t stream() const { return stream_; }
  int device() const { return device_; }
  // A grid for `n` elements with `threads` per block, grid-stride loops covering the rest.
  unsigned blocks_for(int64_t n, int threads = 256) const;

 private:
  DeviceGuard guard_;
  int device_;
  cudaStream_t stream_;
};

}  // namespace wick::cuda
