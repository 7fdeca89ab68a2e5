#include "core/memory/device_allocator.h"

#include <algorithm>

#include "core/error.h"

namespace wick::memory {

DeviceAllocator::DeviceAllocator(MemoryBackend* backend, std::unique_ptr<AllocatorPolicy> policy)
    : backend_(backend), policy_(std::move(policy)) {}

DeviceAllocator::~DeviceAllocator() = default;

void* DeviceAllocator::allocate(size_t nbytes) {
  GraphPool* pool = nullptr;
  if (has_pools_.load(std::memory_order_acquire) && nbytes > 0) {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    pool = capturing_pool();
    if (pool != nullptr) {
      auto fit = pool->unused_.lower_bound(nbytes);  // best fit: the smallest that is enough
      if (fit != pool->unused_.end()) {
        void* ptr = fit->second;
        pool->unused_.erase(fit);
        ++pool->reused_;
        return ptr;
      }
    }
  }
  StreamId stream = backend_->current_stream();
  void* ptr = policy_->malloc(nbytes, stream);
  if (pool != nullptr && ptr != nullptr) {
    // Only this thread captures into `pool`, and only its owner ends it, after this returns.
    std::lock_guard<std::mutex> lock(pool_mutex_);
    pool->owned_[ptr] = nbytes;
  }
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
  if (has_pools_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    for (GraphPool* pool : pools_) {
      auto it = pool->owned_.find(ptr);
      if (it == pool->owned_.end()) continue;
      pool->unused_.emplace(it->second, ptr);  // reserved for the graph, not freed
      return;
    }
  }
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

std::shared_ptr<GraphPool> DeviceAllocator::begin_graph_pool() {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  check_state(capturing_pool() == nullptr, "graph pool",
              "this thread is already capturing into a graph pool on ", backend_->name());
  std::shared_ptr<GraphPool> pool(new GraphPool(this));
  pool->capturing_thread_ = std::this_thread::get_id();
  pool->capturing_ = true;
  pools_.push_back(pool.get());
  has_pools_.store(true, std::memory_order_release);
  return pool;
}

void DeviceAllocator::end_graph_pool(GraphPool& pool) {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  pool.capturing_ = false;
}

GraphPool* DeviceAllocator::capturing_pool() const {
  const std::thread::id me = std::this_thread::get_id();
  for (GraphPool* pool : pools_) {
    if (pool->capturing_ && pool->capturing_thread_ == me) return pool;
  }
  return nullptr;
}

void DeviceAllocator::release_pool(GraphPool* pool) {
  std::multimap<size_t, void*> unused;
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    pools_.erase(std::remove(pools_.begin(), pools_.end(), pool), pools_.end());
    has_pools_.store(!pools_.empty(), std::memory_order_release);
    unused.swap(pool->unused_);
    pool->owned_.clear();  // blocks still in use are freed to the policy when their tensors die
  }
  for (auto& [nbytes, ptr] : unused) deallocate(ptr, nbytes);
}

GraphPool::~GraphPool() { allocator_->release_pool(this); }

int64_t GraphPool::blocks() const {
  std::lock_guard<std::mutex> lock(allocator_->pool_mutex_);
  return static_cast<int64_t>(owned_.size());
}

int64_t GraphPool::bytes() const {
  std::lock_guard<std::mutex> lock(allocator_->pool_mutex_);
  size_t total = 0;
  for (const auto& [ptr, nbytes] : owned_) total += nbytes;
  return static_cast<int64_t>(total);
}

int64_t GraphPool::reused() const {
  std::lock_guard<std::mutex> lock(allocator_->pool_mutex_);
  return reused_;
}

bool GraphPool::capturing() const {
  std::lock_guard<std::mutex> lock(allocator_->pool_mutex_);
  return capturing_;
}

}  // namespace wick::memory
