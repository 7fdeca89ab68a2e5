// Where an allocator policy gets its memory: a MemoryBackend hands out whole segments (cudaMalloc
// on a GPU) and knows the device's streams and events, which say when the last use of a block has
// finished. The policies (caching_allocator.h, bfc_allocator.h, policy.h) are written against this
// interface only, so the same algorithm runs on a GPU and, for tests and labs, on a simulated
// device in host memory (simulated_device.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/device.h"

namespace wick::memory {

// Opaque handles. On CUDA a StreamId is the cudaStream_t and an EventId the cudaEvent_t; on the
// simulated device they are small numbers. Stream 0 is the default stream everywhere.
using StreamId = uint64_t;
using EventId = uint64_t;
constexpr StreamId kDefaultStream = 0;

class MemoryBackend {
 public:
  virtual ~MemoryBackend() = default;

  virtual std::string name() const = 0;  // "cuda:0", "simulated device"
  virtual Device device() const = 0;     // the device the memory belongs to

  // A segment of `nbytes`, or nullptr when the device has no memory left. Other failures throw.
  virtual void* malloc(size_t nbytes) = 0;
  virtual void free(void* ptr, size_t nbytes) = 0;
  virtual size_t total_memory() const = 0;
  virtual size_t free_memory() const = 0;  // what the device says is free (cudaMemGetInfo)

  // The stream new work is queued on by the calling thread.
  virtual StreamId current_stream() const = 0;
  // An event recorded on `stream` completes once the work queued before it has run.
  virtual EventId record_event(StreamId stream) = 0;
  virtual bool query_event(EventId event) = 0;
  virtual void synchronize_event(EventId event) = 0;
  virtual void release_event(EventId event) = 0;  // back to the backend's pool
};

}  // namespace wick::memory
