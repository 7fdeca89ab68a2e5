// The CUDA allocators inside cuda/: the device caching allocator (one policy per GPU, behind
// core's Allocator for kCUDA) and the pinned host allocator.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "core/allocator.h"
#include "core/memory/caching_allocator.h"
#include "core/memory/device_allocator.h"

namespace wick::cuda {

// The allocator for kCUDA tensors: the caching allocator, or, without a device, one whose every
// allocation throws "[cuda] no CUDA device is available (...)". The CUDA backend's description
// (cuda/register.cpp) hands it to core on the first CUDA tensor.
Allocator* cuda_backend_allocator();

// The allocator policy of `device` (created on first use; WICK_ALLOC_CONF picks the policy).
memory::AllocatorPolicy& device_policy(int device);
// Core's Allocator for `device`, over that policy (its graph pools: Note [graph pool]).
memory::DeviceAllocator& device_allocator(int device);

// Scratch device memory (a cuDNN workspace, reduction partials) from the caching allocator,
// freed when it goes out of scope. Freeing right after queuing the kernel that uses it is safe:
// the block is reused only by later work on the same stream (Note [streams and events]).
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t nbytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return data_; }
  size_t size() const { return nbytes_; }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
};

// The pinned host allocator, and a way for copies to tell it that a pinned block is being read
// by work on `stream`, so the block is not reused before that work is done.
Allocator* pinned_allocator();
// True if `ptr` is the start of a block from the pinned allocator; records an event on `stream`.
bool record_pinned_use(const void* ptr, cudaStream_t stream);

}  // namespace wick::cuda
