// TensorFlow's BFC ("best-fit with coalescing") allocator, for comparison with PyTorch's caching
// allocator (design-facts.md section 2; tensorflow/core/common_runtime/bfc_allocator.cc).
//
// Note [BFC vs caching]
// TensorFlow grabs one big region up front - by default nearly all free device memory - and
// manages it like dlmalloc: every request is rounded to 256 bytes; free chunks sit in 21 bins of
// power-of-two size classes (bin b holds [256 << b, 256 << (b + 1))), each sorted by (size,
// address); allocation scans its bin and the larger ones for the smallest chunk that fits, and
// splits it if the chunk is at least twice the request or would waste 128 MiB or more; a freed
// chunk merges with free neighbours at once. With allow_growth it instead starts with a 2 MiB
// region and doubles the next region's size whenever it must grow. Memory is never returned to
// the device except by garbage collection of whole free regions when an allocation would fail.
// There is no notion of streams: TensorFlow runs one compute stream per device.
//
// Compared with the caching allocator: one device malloc instead of hundreds (and none at run
// time), no per-stream pools, but a fixed footprint that other processes cannot use, and the
// whole fragmentation risk of one heap.
#pragma once

#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/memory/policy.h"

namespace wick::memory {

struct BfcOptions {
  bool allow_growth = false;
  // The share of device memory to manage; 0 means TensorFlow's default: the free memory less a
  // reserve for the system (225 MiB when less than 2 GiB is free, else 1536 MiB).
  double memory_fraction = 0.0;
  // On failure, free regions with no chunk in use and try to grow again.
  bool garbage_collection = true;
};

class BfcAllocator final : public AllocatorPolicy {
 public:
  static constexpr size_t kMinAllocationSize = 256;
  static constexpr int kNumBins = 21;
  static constexpr size_t kMaxInternalFragmentation = size_t{128} << 20;

  BfcAllocator(MemoryBackend* backend, BfcOptions options = BfcOptions());
  ~BfcAllocator() override;

  const char* name() const override { return options_.allow_growth ? "bfc_growth" : "bfc"; }
  void* malloc(size_t nbytes, StreamId stream) override;
  void free(void* ptr) override;
  // Frees regions with no chunk in use (TensorFlow's garbage collection).
  void empty_cache() override;
  DeviceStats stats() const override;
  void reset_peak_stats() override;
  void reset_accumulated_stats() override;
  size_t largest_free_block() const override;
  MemoryBackend* backend() const override { return backend_; }
  std::vector<SegmentInfo> snapshot() const override;

  size_t memory_limit() const { return memory_limit_; }
  static int bin_for_size(size_t bytes);

 private:
  using ChunkHandle = int64_t;
  static constexpr ChunkHandle kInvalid = -1;
  struct Chunk {
    char* ptr = nullptr;
    size_t size = 0;
    size_t requested = 0;
    bool in_use = false;
    int bin = -1;
    ChunkHandle prev = kInvalid, next = kInvalid;
  };
  struct Region {
    char* ptr;
    size_t size;
    ChunkHandle first;
  };
  using BinEntry = std::tuple<size_t, uintptr_t, ChunkHandle>;  // (size, address, chunk)

  void* find_chunk(size_t rounded, size_t requested);
  bool extend(size_t rounded);
  bool deallocate_free_regions(size_t rounded);
  void split_chunk(ChunkHandle h, size_t size);
  void merge(ChunkHandle h1, ChunkHandle h2);
  void insert_into_bin(ChunkHandle h);
  void remove_from_bin(ChunkHandle h);
  ChunkHandle new_chunk();
  void delete_chunk(ChunkHandle h);

  MemoryBackend* const backend_;
  const BfcOptions options_;
  mutable std::mutex mutex_;
  size_t memory_limit_ = 0;
  size_t curr_region_allocation_bytes_ = 0;
  size_t total_region_allocated_bytes_ = 0;
  std::vector<Chunk> chunks_;
  std::vector<ChunkHandle> free_handles_;
  std::set<BinEntry> bins_[kNumBins];
  std::vector<Region> regions_;
  std::unordered_map<void*, ChunkHandle> in_use_;
  DeviceStats stats_;
};

}  // namespace wick::memory
