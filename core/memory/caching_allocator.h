// PyTorch's CUDA caching allocator, device-agnostic: the same algorithm runs on a GPU (cuda/
// gives it a cudaMalloc backend) and on the simulated device (simulated_device.h) in CPU tests.
//
// The rules, each implemented where its Note is (caching_allocator.cpp), follow
// c10/cuda/CUDACachingAllocator.cpp as summarized in design-facts.md section 1:
//
//   Note [block rounding]        every request is rounded up to a multiple of 512 bytes
//   Note [two pools]             requests <= 1 MiB come from 2 MiB segments (small pool); larger
//                                ones from 20 MiB segments below 10 MiB, else a 2 MiB multiple
//   Note [best fit per stream]   a cached block is found by (stream, size, address): the smallest
//                                free block on the requesting stream that fits
//   Note [splitting]             a small-pool block is split if >= 512 bytes would remain; a
//                                large-pool one if > 1 MiB would (and the request is below
//                                max_split_size)
//   Note [coalescing]            a freed block merges with free neighbours of its segment
//   Note [streams and events]    a block is reused only on its stream; record_stream marks other
//                                streams that use it, and freeing it then waits for events
//   Note [out of memory]         free cached blocks and retry the device malloc, then raise
//                                OutOfMemoryError with what was asked, allocated and reserved
//   Note [memory fraction]       reserved memory may be capped at a fraction of the device
//   Note [garbage collection]    near the cap, free the oldest cached segments first
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/memory/node_pool.h"
#include "core/memory/policy.h"

namespace wick::memory {

constexpr size_t kMinBlockSize = 512;        // all sizes are multiples of this
constexpr size_t kSmallSize = 1 << 20;       // largest request served by the small pool
constexpr size_t kSmallBuffer = 2 << 20;     // small-pool segment size
constexpr size_t kMinLargeAlloc = 10 << 20;  // requests below this get a kLargeBuffer segment
constexpr size_t kLargeBuffer = 20 << 20;    // large-pool segment size for mid-size requests
constexpr size_t kRoundLarge = 2 << 20;      // larger requests: segment rounded to 2 MiB
constexpr uint64_t kMaxRequest = uint64_t{1} << 60;  // 1 EiB: anything larger is refused at once

class CachingAllocator final : public AllocatorPolicy {
 public:
  explicit CachingAllocator(MemoryBackend* backend, AllocatorConfig config = AllocatorConfig());
  // Gives every cached segment back; blocks still allocated are leaked (and counted).
  ~CachingAllocator() override;
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  const char* name() const override { return "caching"; }
  void* malloc(size_t nbytes, StreamId stream) override;
  void free(void* ptr) override;
  void record_stream(void* ptr, StreamId stream) override;
  void empty_cache() override;

  DeviceStats stats() const override;
  void reset_peak_stats() override;
  void reset_accumulated_stats() override;
  size_t largest_free_block() const override;
  MemoryBackend* backend() const override { return backend_; }

  // Caps reserved memory at `fraction` of the device's total (0 <= fraction <= 1).
  void set_memory_fraction(double fraction);
  double memory_fraction() const;
  const AllocatorConfig& config() const { return config_; }

  // Every segment and block (PyTorch's memory_snapshot), sorted by address.
  std::vector<SegmentInfo> snapshot() const override;

  // The size a request is rounded to (Note [block rounding]) and the segment it would get when
  // no cached block fits (Note [two pools]). Public so tests and labs can tabulate them.
  static size_t round_size(size_t nbytes, const AllocatorConfig& config = AllocatorConfig());
  static size_t roundup_power2_next_division(size_t size, size_t divisions);
  static size_t segment_size(size_t rounded);

 private:
  struct Block;
  struct BlockPool;
  struct BlockLess {
    bool operator()(const Block* a, const Block* b) const;
  };
  struct Request;

  bool get_free_block(Request& r);
  bool alloc_block(Request& r, bool is_retry);
  void* finish_alloc(Request& r, size_t nbytes);
  bool should_split(const Block* block, size_t size) const;
  void free_block(Block* block);
  size_t try_merge(Block* dst, Block* src);
  void release_block(Block* block);
  void release_blocks(BlockPool& pool);
  bool release_available_cached_blocks(const Request& r);
  bool release_cached_blocks();
  void garbage_collect_cached_blocks();
  void insert_events(Block* block);
  void process_events();
  void synchronize_and_free_events();
  [[noreturn]] void throw_out_of_memory(size_t nbytes, size_t rounded);
  void pool_insert(BlockPool& pool, Block* block);

  Block* new_block();
  void delete_block(Block* block);

  MemoryBackend* const backend_;
  const AllocatorConfig config_;
  mutable std::mutex mutex_;
  NodePool nodes_;  // before the containers that use it: destroyed after them
  std::unique_ptr<BlockPool> small_pool_, large_pool_;
  // Allocated blocks by address.
  std::unordered_map<void*, Block*, std::hash<void*>, std::equal_to<void*>,
                     PoolAllocator<std::pair<void* const, Block*>>>
      allocated_;
  // Freed blocks waiting for events, per stream the events were recorded on, oldest first.
  std::unordered_map<StreamId, std::vector<std::pair<EventId, Block*>>> outstanding_;
  size_t outstanding_count_ = 0;
  DeviceStats stats_;
  size_t reserved_ = 0;  // bytes in segments
  double fraction_ = 1.0;
  bool fraction_set_ = false;
  size_t allowed_max_ = SIZE_MAX;  // fraction_ * total memory, when set
};

}  // namespace wick::memory
