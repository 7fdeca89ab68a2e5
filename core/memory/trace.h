// Allocation traces: record every alloc and free a program makes, then replay them under each
// allocator policy on a simulated device and compare (tools/alloc_replay).
//
// A trace is JSON lines, one event per line:
//   {"event":"alloc","ptr":140234,"size":1024,"stream":0,"t_us":12.5}
//   {"event":"free","ptr":140234,"size":1024,"stream":0,"t_us":13.0}
// `ptr` only identifies the allocation (it is unique among live allocations); `t_us` is the time
// since recording started.
#pragma once

#include <cstdint>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "core/memory/alloc_config.h"
#include "core/memory/backend.h"

namespace wick::memory {

struct TraceEvent {
  enum Kind { Alloc, Free } kind = Alloc;
  uint64_t ptr = 0;
  uint64_t size = 0;
  StreamId stream = 0;
  double time_us = 0;
};

// Appends events to a JSON-lines file; safe to call from several threads.
class TraceRecorder {
 public:
  explicit TraceRecorder(const std::string& path);
  void record(TraceEvent::Kind kind, const void* ptr, uint64_t size, StreamId stream);
  int64_t num_events() const;

 private:
  mutable std::mutex mutex_;
  std::ofstream out_;
  int64_t events_ = 0;
  int64_t start_ns_;
};

// Reads a trace; throws std::invalid_argument naming the file and line of a malformed event.
std::vector<TraceEvent> read_trace(const std::string& path);

struct ReplayResult {
  std::string policy;
  int64_t device_mallocs = 0;
  int64_t device_frees = 0;
  int64_t peak_reserved = 0;   // bytes held from the device at most
  int64_t peak_allocated = 0;  // bytes handed out at most (after the policy's rounding)
  int64_t peak_requested = 0;  // what the program asked for at most (the same for every policy)
  // At the moment the program's live memory peaked: the share of free reserved memory that is
  // not in the largest free block, (free - largest) / free, TensorFlow's measure (0 = none).
  double fragmentation = 0;
  double seconds = 0;          // time spent in the policy's malloc and free
  bool out_of_memory = false;  // the replay stopped at an allocation the policy refused
  std::string error;
};

// Replays `events` under `policy` ("caching", "no_caching", "bfc", "bfc_growth") on a simulated
// device of `capacity` bytes that hands out addresses but no real memory.
ReplayResult replay(const std::vector<TraceEvent>& events, const std::string& policy,
                    size_t capacity, const AllocatorConfig& config = AllocatorConfig());

// The results as an aligned text table.
std::string format_replay_table(const std::vector<ReplayResult>& results);

}  // namespace wick::memory
