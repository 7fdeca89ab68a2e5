// The CUDA side of a replay captured as one CUDA Graph (Note [a replay as one CUDA Graph] in
// executor.cpp). jit/ reaches devices only through the dispatcher, so the capture is declared
// here and implemented in cuda/graph.cpp over cuda::CUDAGraph; cuda/no_cuda.cpp stands in
// without CUDA.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace wick::jit {

class CapturedReplay {
 public:
  // Runs `replay` once under stream capture on a side stream of `device` (one per thread and
  // device): its kernels are recorded, not run. Throws std::runtime_error if the capture failed.
  CapturedReplay(int device, const std::function<void()>& replay);
  ~CapturedReplay();  // waits for the device, then frees the graph and its pool
  CapturedReplay(const CapturedReplay&) = delete;
  CapturedReplay& operator=(const CapturedReplay&) = delete;

  void launch();  // on the device's current stream
  int64_t num_nodes() const;
  int64_t pool_bytes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace wick::jit
