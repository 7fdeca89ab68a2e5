// What an allocator reports: PyTorch's memory statistics, with the same names and meanings, so
// numbers from wick and from torch.cuda.memory_stats() can be put side by side.
//
// Each Stat has four numbers: current, peak (since reset_peak_stats), allocated and freed (sums of
// every increase and decrease since reset_accumulated_stats). Most stats come as an array over
// {all, small_pool, large_pool}:
//
//   allocation, allocated_bytes   blocks handed out to tensors (sizes after rounding)
//   requested_bytes               the sizes the tensors asked for
//   segment, reserved_bytes       device mallocs held by the allocator (cudaMalloc'd)
//   active, active_bytes          allocated blocks, plus freed ones still waiting for events
//   inactive_split(_bytes)        free blocks inside segments that are partly in use: memory
//                                 that is cached but cannot be given back (fragmentation)
//   oversize_allocations/segments blocks and segments of at least max_split_size
//
// memory_stats() flattens them into "<stat>.<all|small_pool|large_pool>.<current|peak|
// allocated|freed>" keys, e.g. "active_bytes.all.current", plus num_alloc_retries, num_ooms,
// num_sync_all_streams, num_device_alloc, num_device_free and max_split_size (-1: unlimited).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

namespace wick::memory {

struct Stat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;
  int64_t freed = 0;

  void increase(int64_t amount) {
    current += amount;
    if (current > peak) peak = current;
    allocated += amount;
  }
  void decrease(int64_t amount) {
    current -= amount;
    freed += amount;
  }
  void reset_accumulated() { allocated = freed = 0; }
  void reset_peak() { peak = current; }
};

enum StatType { kAggregate = 0, kSmallPool = 1, kLargePool = 2 };
constexpr int kNumStatTypes = 3;
using StatArray = std::array<Stat, kNumStatTypes>;

struct DeviceStats {
  StatArray allocation, segment, active, inactive_split;
  StatArray allocated_bytes, reserved_bytes, active_bytes, inactive_split_bytes, requested_bytes;
  Stat oversize_allocations, oversize_segments;
  int64_t num_alloc_retries = 0;     // device mallocs retried after freeing the cache
  int64_t num_ooms = 0;              // OutOfMemoryErrors raised
  int64_t num_sync_all_streams = 0;  // waits on every outstanding event (OOM path, empty_cache)
  int64_t num_device_alloc = 0;      // successful device mallocs (cudaMalloc)
  int64_t num_device_free = 0;       // device frees (cudaFree)
  int64_t max_split_size = -1;       // bytes; -1 for no limit

  void reset_accumulated();
  void reset_peak();
};

// PyTorch's memory_stats(): every stat as a flat, sorted key -> value map.
std::map<std::string, int64_t> stats_to_map(const DeviceStats& stats);

// PyTorch's memory_summary(): a 75-column table of the stats; `title` names the device.
std::string memory_summary(const DeviceStats& stats, const std::string& title,
                           bool abbreviated = false);

// "20.00 MiB": sizes in error messages, as PyTorch writes them.
std::string format_size(uint64_t bytes);

}  // namespace wick::memory
