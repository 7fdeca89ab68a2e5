// DeviceAllocator: an allocator policy over a backend, seen through core's Allocator interface,
// which is what Storage calls. It asks the backend for the current stream on every allocation,
// keeps the Allocator counters, and can record a trace of everything it does (trace.h).
//
// The CUDA backend installs one per GPU (cuda/cuda_allocator.cpp). Tests and labs install one
// over a SimulatedDevice as the CPU allocator, so ordinary tensors exercise the caching
// allocator and its statistics without a GPU:
//
//   memory::SimulatedDevice device(1 << 30);
//   memory::DeviceAllocator allocator(&device,
//   std::make_unique<memory::CachingAllocator>(&device)); Allocator* previous = set_allocator(kCPU,
//   &allocator); Tensor x = randn({256});  // +1024 allocated bytes, one 2 MiB segment
//   set_allocator(kCPU, previous);
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include <vector>

#include "core/allocator.h"
#include "core/memory/graph_pool.h"
#include "core/memory/policy.h"
#include "core/memory/trace.h"

namespace wick::memory {

class DeviceAllocator final : public Allocator {
 public:
  DeviceAllocator(MemoryBackend* backend, std::unique_ptr<AllocatorPolicy> policy);
  ~DeviceAllocator() override;

  void* allocate(size_t nbytes) override;
  void deallocate(void* ptr, size_t nbytes) override;
  Device device() const override { return backend_->device(); }
  const char* name() const override { return policy_->name(); }
  AllocatorStats stats() const override;
  void reset_peak() override { policy_->reset_peak_stats(); }

  AllocatorPolicy& policy() const { return *policy_; }
  MemoryBackend& backend() const { return *backend_; }

  // Starts writing every allocation and free to `path` (JSON lines), or stops.
  void start_trace(const std::string& path);
  void stop_trace();

  // A pool for a graph capture (Note [graph pool] in graph_pool.h): until end_graph_pool(), this
  // thread's allocations come from it, and blocks it hands out stay its own when freed.
  // Throws std::runtime_error if this thread is already capturing into a pool.
  std::shared_ptr<GraphPool> begin_graph_pool();
  void end_graph_pool(GraphPool& pool);

 private:
  friend class GraphPool;
  // The capturing pool of this thread, if any (caller holds pool_mutex_).
  GraphPool* capturing_pool() const;
  void release_pool(GraphPool* pool);

  MemoryBackend* const backend_;
  const std::unique_ptr<AllocatorPolicy> policy_;
  std::mutex trace_mutex_;
  std::shared_ptr<TraceRecorder> trace_;
  std::atomic<bool> tracing_{false};  // checked without the lock on every call
  mutable std::mutex pool_mutex_;
  std::vector<GraphPool*> pools_;
  std::atomic<bool> has_pools_{false};  // checked without the lock on every call
};

}  // namespace wick::memory
