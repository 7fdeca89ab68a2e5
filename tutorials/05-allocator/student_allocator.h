// Lab 05: your caching allocator. It follows PyTorch's rules (design-facts 1) on one stream, on
// wick's simulated device, behind the same AllocatorPolicy interface as wick's own policies, so
// one trace can be replayed under yours, wick's PyTorch-style "caching" and TensorFlow's BFC.
//
// malloc(n):  size = round_size(n); pool = small (size <= 1 MiB) or large;
//             block = find_free_block(pool, size), or a new segment of segment_size(size) bytes
//             from the device; if should_split(block, size), split it and keep the rest cached.
// free(p):    mark the block free, coalesce it with free neighbours of its segment, cache it.
// empty_cache(): give every segment that is entirely free back to the device.
//
// The gaps are in solution/student_allocator.cpp (your copy: starter/student_allocator.cpp).
#pragma once

#include <cstddef>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/memory/backend.h"
#include "core/memory/policy.h"

namespace lab05 {

using wick::memory::DeviceStats;
using wick::memory::MemoryBackend;
using wick::memory::StreamId;

constexpr size_t kMinBlockSize = 512;        // every size is a multiple of this
constexpr size_t kSmallSize = 1 << 20;       // the largest request served by the small pool
constexpr size_t kSmallBuffer = 2 << 20;     // small-pool segment size
constexpr size_t kMinLargeAlloc = 10 << 20;  // large requests below this get a kLargeBuffer
constexpr size_t kLargeBuffer = 20 << 20;    // large-pool segment size for mid-size requests
constexpr size_t kRoundLarge = 2 << 20;      // larger requests: segment rounded up to 2 MiB

// A piece of a segment. The pieces of one segment form a doubly linked list in address order;
// a segment that is one whole block has prev == next == nullptr.
struct Block {
  char* ptr = nullptr;
  size_t size = 0;
  bool small = false;  // which pool it belongs to
  bool allocated = false;
  Block* prev = nullptr;
  Block* next = nullptr;
};

// Free blocks of one pool, ordered by (size, address): lower_bound finds the best fit.
struct BlockLess {
  bool operator()(const Block* a, const Block* b) const {
    return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
  }
};
using Pool = std::set<Block*, BlockLess>;

// ---- the rules (gaps) ----
size_t round_size(size_t nbytes);                    // up to a multiple of 512, at least 512
size_t segment_size(size_t size);                    // device malloc size for a rounded request
bool should_split(const Block* block, size_t size);  // keep the remainder as a free block?

class StudentAllocator final : public wick::memory::AllocatorPolicy {
 public:
  explicit StudentAllocator(MemoryBackend* backend) : backend_(backend) {}
  ~StudentAllocator() override;

  const char* name() const override { return "student"; }
  void* malloc(size_t nbytes, StreamId stream) override;
  void free(void* ptr) override;
  void empty_cache() override;  // gap

  DeviceStats stats() const override { return stats_; }
  void reset_peak_stats() override { stats_.reset_peak(); }
  void reset_accumulated_stats() override { stats_.reset_accumulated(); }
  size_t largest_free_block() const override;
  MemoryBackend* backend() const override { return backend_; }

  // ---- the steps (gaps), public so the tests can call them one by one ----
  // The smallest free block of `pool` with at least `size` bytes, taken out of the pool; nullptr
  // if there is none.
  Block* find_free_block(Pool& pool, size_t size);
  // Cuts `block` (not in any pool) into a first part of `size` bytes, which it returns, and a
  // free remainder linked after it and put into the block's pool.
  Block* split(Block* block, size_t size);
  // `block` was just freed (not in any pool): merges it with its free neighbours (taking them
  // out of the pool and deleting them) and returns the merged block, not yet in any pool.
  Block* coalesce(Block* block);

  Pool& pool_of(const Block* block) { return block->small ? small_ : large_; }
  const Pool& small_pool() const { return small_; }
  const Pool& large_pool() const { return large_; }

 private:
  // A new segment of `size` bytes from the device, as one free block not in any pool.
  Block* new_segment(size_t size, bool small);
  // Returns a whole, free segment (prev == next == nullptr, not in any pool) to the device.
  void release_segment(Block* block);

  MemoryBackend* backend_;
  Pool small_, large_;
  std::unordered_map<void*, Block*> allocated_;
  DeviceStats stats_;
};

// ---- step 6: a host block cache (wick's is core/memory/host_cache.h, Note [host block cache]) --
// glibc unmaps a large block on free, so the next block of the same size is faulted in again,
// page by page, each page zeroed by the kernel. Keep freed blocks by size class instead.

// The class of a request: rounded up to the next of four steps per power of two (1 MiB + 1 ->
// 1.25 MiB, 3 MiB - 1 -> 3 MiB); a power of two is its own class.
size_t host_size_class(size_t nbytes);

class HostBlockCache {
 public:
  explicit HostBlockCache(size_t limit_bytes) : limit_(limit_bytes) {}
  ~HostBlockCache();  // frees every cached block
  HostBlockCache(const HostBlockCache&) = delete;
  HostBlockCache& operator=(const HostBlockCache&) = delete;

  // A block of host_size_class(nbytes) bytes, 64-byte aligned: the last one freed of its class,
  // else a new one from std::aligned_alloc.
  void* acquire(size_t nbytes);
  // Keeps `ptr` (from acquire(nbytes)) for its class if the cache stays within its limit;
  // otherwise std::free's it.
  void release(void* ptr, size_t nbytes);

  size_t cached_bytes() const { return cached_; }
  size_t hits() const { return hits_; }  // acquires served from a free list

 private:
  size_t limit_, cached_ = 0, hits_ = 0;
  std::unordered_map<size_t, std::vector<void*>> free_;  // class -> blocks, last freed at the back
};

}  // namespace lab05
