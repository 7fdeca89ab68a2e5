#include "core/memory/device_allocator.h"

namespace wick::memory {

DeviceAllocator::DeviceAllocator(MemoryBackend* backend, std::unique_ptr<AllocatorPolicy> policy)
    : backend_(backend), policy_(std::move(policy)) {}

DeviceAllocator::~DeviceAllocator() = default;

void* DeviceAllocator::allocate(size_t nbytes) {
  StreamId stream = backend_->current_stream();
  void* ptr = policy_->malloc(nbytes, stream);
  if (tracing_.load(std::memory_order_relaxed) && ptr != nullptr) {
    std::shared_ptr<TraceRecorder> trace;
    {
      std::lock_guard<std::mutex> lock(trace_mutex_);
      trace = trace_;
    }
    if (trace) trace->record(TraceEvent::Alloc, ptr, nbytes, stream);
  }
  return ptr;
}

void DeviceAllocator::deallocate(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  if (tracing_.load(std::memory_order_relaxed)) {
    std::shared_ptr<TraceRecorder> trace;
    {
      std::lock_guard<std::mutex> lock(trace_mutex_);
      trace = trace_;
    }
    if (trace) trace->record(TraceEvent::Free, ptr, nbytes, backend_->current_stream());
  }
  policy_->free(ptr);
}

AllocatorStats DeviceAllocator::stats() const {
  DeviceStats s = policy_->stats();
  AllocatorStats out;
  out.allocated_bytes = s.allocated_bytes[kAggregate].current;
  out.peak_allocated_bytes = s.allocated_bytes[kAggregate].peak;
  out.num_allocs = s.allocation[kAggregate].allocated;
  out.num_frees = s.allocation[kAggregate].freed;
  return out;
}

void DeviceAllocator::start_trace(const std::string& path) {
  auto recorder = std::make_shared<TraceRecorder>(path);
  std::lock_guard<std::mutex> lock(trace_mutex_);
  trace_ = std::move(recorder);
  tracing_ = true;
}

void DeviceAllocator::stop_trace() {
  std::lock_guard<std::mutex> lock(trace_mutex_);
  tracing_ = false;
  trace_.reset();
}

}  // namespace wick::memory
