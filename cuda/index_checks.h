// Out-of-range indices on the GPU: the record an indexing kernel writes (Note [index bounds on
// the GPU] in index.cu), and how a graph capture takes over reading it back.
//
// Note [index checks in a captured graph]
// The launcher of an indexing kernel reads the kernel's error record back and throws. Inside a
// stream capture nothing runs and the host may not wait for the stream, so the launcher hands
// the record to the CUDAGraph being captured instead (defer_index_check). The graph keeps the
// record alive (the capture's memset clears it on each replay), and replay() reads every record
// back after the launch and throws the IndexError the op would have thrown: one synchronisation
// per replay instead of one per indexing op, and still no out-of-range index passes silently.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "cuda/allocator.h"

namespace wick::cuda {

struct IndexErrorRecord {
  int flag;       // set (atomically, once) by the first thread that met a bad index
  int64_t value;  // that index
};

struct DeferredIndexCheck {
  std::shared_ptr<DeviceBuffer> record;  // an IndexErrorRecord on the device
  std::string op;
  int64_t dim = 0;
  int64_t size = 0;
};

// If `stream` is being captured by a CUDAGraph, gives it `check` and returns true; otherwise
// returns false and the caller reads the record back itself.
bool defer_index_check(cudaStream_t stream, DeferredIndexCheck check);

}  // namespace wick::cuda
