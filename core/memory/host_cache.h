// Note [host block cache]
// glibc's malloc serves a block above its mmap threshold (128 KiB, rising to at most 32 MiB as
// such blocks are freed) with a fresh mmap and unmaps it on free, so the next request of the same
// size meets page faults again: the kernel zeroes every page on its first touch. An eager forward
// allocates the same activations, and a convolution packs the same weight, on every call. The
// rising threshold helps until the heap's top is trimmed or the process has run other code: a
// batch-1 ResNet-18 forward (2 threads) in a process that had also run PyTorch took 1,153 minor
// faults and 48 ms through malloc, 57 faults and 33-36 ms with blocks kept; a ResNet-20 training
// step (batch 64) takes 2,760-2,919 faults through malloc and 5 with this cache. PyTorch's CPU
// allocator is malloc (its CPU tuning guide preloads jemalloc or tcmalloc for this reason); MXNet
// pools host memory by size (MXNET_CPU_MEM_POOL_TYPE); TensorFlow can put a BFC allocator there.
//
// wick keeps freed blocks of kHostCacheMin and more (glibc's first threshold) in free lists by
// size class, without splitting or coalescing (the CUDA caching allocator's segments,
// core/memory/caching_allocator.h, exist because cudaMalloc is slow and synchronises; on the host
// the only cost to avoid is the faults):
//   - a request is rounded up to one of four classes per power of two (at most 25% more), so a
//     block freed by one step fits the same request in the next;
//   - a free list is last in, first out: the block freed last is the likeliest still in cache;
//   - the cache holds at most a limit (WICK_HOST_CACHE_MB, 1024 MiB by default); a block that
//     would go over it is given back to the system, and empty_host_cache() gives back them all.
// The tensor allocator (cpu_allocator) and the kernels' packed weights (HostBuffer) both use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace wick::memory {

constexpr size_t kHostCacheMin = size_t{128} << 10;  // smaller blocks stay with malloc

// 64-byte aligned memory for `nbytes` (> 0), or nullptr if the system has none.
void* host_try_acquire(size_t nbytes);
// The same, but throws OutOfMemoryError where host_try_acquire returns nullptr.
void* host_acquire(size_t nbytes);
// Gives back a block from either, with the same `nbytes` (blocks below kHostCacheMin are freed).
void host_release(void* ptr, size_t nbytes);
// The size a request of `nbytes` really takes (its class, for cached sizes).
size_t host_block_size(size_t nbytes);

struct HostCacheStats {
  int64_t cached_bytes = 0;  // in free lists now
  int64_t limit_bytes = 0;
  int64_t hits = 0;        // requests served from a free list
  int64_t misses = 0;      // requests that went to the system
  int64_t given_back = 0;  // blocks freed to the system because the cache was full
};
HostCacheStats host_cache_stats();
// Frees every cached block.
void empty_host_cache();
// Sets the most the cache may hold (0 turns caching off) and trims it to that.
void set_host_cache_limit(size_t bytes);

// An owning array of T from the host cache: a kernel's workspace that is made on every call.
template <class T>
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(size_t count)
      : data_(count ? static_cast<T*>(host_acquire(count * sizeof(T))) : nullptr), count_(count) {}
  ~HostBuffer() { reset(); }
  HostBuffer(HostBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  HostBuffer& operator=(HostBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return count_; }

 private:
  void reset() {
    if (data_ != nullptr) host_release(data_, count_ * sizeof(T));
    data_ = nullptr;
    count_ = 0;
  }
  T* data_ = nullptr;
  size_t count_ = 0;
};

}  // namespace wick::memory
