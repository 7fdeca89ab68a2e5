// Memory history and snapshots: PyTorch's torch.cuda.memory._record_memory_history(),
// _snapshot() and _dump_snapshot() for wick's allocator policies.
//
// Note [memory history]
// A trace (trace.h) keeps what the *program* asked for, so it can be replayed under another
// policy. A history keeps what the *allocator* did with it: each block handed out and taken
// back (alloc, free, at the rounded size that allocated_bytes counts) and each segment obtained
// from and returned to the device (segment_alloc, segment_free), with its address, stream, time
// and owner. The owner is the op and the module path that were running on the allocating
// thread, read from OwnerScope / ModuleScope below; they cost one relaxed load while no history
// is recording. Names are interned per history, so an entry is a few words.
//
// The history is a ring of at most max_entries (PyTorch's default: 100,000) entries; the oldest
// are dropped first, so recording can stay on for a whole run. A snapshot is the allocator's
// segments and blocks now plus that window of history: a viewer walks the history backwards from
// the snapshot to show any earlier moment it covers (tools/memory_viewer.py).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/memory/alloc_stats.h"
#include "core/memory/backend.h"

namespace wick::memory {

struct HistoryEntry {
  enum Action : uint8_t { Alloc, Free, SegmentAlloc, SegmentFree, Oom };
  Action action = Alloc;
  uint64_t address = 0;  // for Oom: 0
  uint64_t size = 0;     // block or segment bytes; for Oom the bytes asked for
  StreamId stream = 0;
  double time_us = 0;   // since the history was created
  uint32_t op = 0;      // index into names(); 0 = not known
  uint32_t module = 0;  // likewise
};

const char* action_name(HistoryEntry::Action action);  // "alloc", "segment_free", ...

class MemoryHistory {
 public:
  static constexpr size_t kDefaultMaxEntries = 100000;
  explicit MemoryHistory(size_t max_entries = kDefaultMaxEntries);
  ~MemoryHistory();
  MemoryHistory(const MemoryHistory&) = delete;
  MemoryHistory& operator=(const MemoryHistory&) = delete;

  // Appends one entry with the calling thread's owner; safe from several threads.
  void record(HistoryEntry::Action action, uint64_t address, uint64_t size, StreamId stream);

  std::vector<HistoryEntry> entries() const;  // oldest first
  std::vector<std::string> names() const;     // names()[0] == ""
  size_t max_entries() const { return max_entries_; }
  int64_t recorded() const;  // entries recorded since it was made
  int64_t dropped() const;   // entries recorded but no longer kept

 private:
  uint32_t intern(const char* name);  // with mutex_ held

  const size_t max_entries_;
  const std::chrono::steady_clock::time_point start_;
  mutable std::mutex mutex_;
  std::vector<HistoryEntry> ring_;
  size_t next_ = 0;  // where the next entry goes once the ring is full
  int64_t recorded_ = 0;
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> ids_;
};

// True while any MemoryHistory exists: owner scopes do nothing otherwise.
bool history_active();

// Names the op running on this thread for as long as it lives. The outermost scope wins - the
// op the program called, not the ops it is built from - unless `replace`: the autograd engine
// replaces "Tensor.backward" with each node it runs. `op` must outlive the scope (op names and
// pybind11 function names are static).
class OwnerScope {
 public:
  explicit OwnerScope(const char* op, bool replace = false);
  ~OwnerScope();
  OwnerScope(const OwnerScope&) = delete;
  OwnerScope& operator=(const OwnerScope&) = delete;

 private:
  const char* previous_;
  bool active_;
};

// The module path ("Net.features.0") of this thread; returns the previous one so a caller
// (nn.Module.__call__ in Python) can put it back.
std::string set_module_path(std::string path);
const std::string& module_path();
const char* current_op();  // nullptr when none

// One block as a snapshot shows it.
struct BlockInfo {
  uintptr_t address = 0;
  size_t size = 0;
  size_t requested_size = 0;  // 0 unless allocated
  bool allocated = false;
  bool pending_events = false;  // freed, waiting for other streams' work to finish
};

// One segment (one device malloc) and the blocks that tile it, in address order.
struct SegmentInfo {
  uintptr_t address = 0;
  size_t size = 0;
  StreamId stream = 0;
  bool small_pool = false;
  std::vector<BlockInfo> blocks;
};

// PyTorch's _snapshot(): segments now, the recorded history, and the statistics.
struct MemorySnapshot {
  std::string device;  // "simulated device", "cuda:0"
  std::string policy;  // "caching", "bfc", ...
  std::vector<SegmentInfo> segments;
  std::vector<HistoryEntry> history;
  std::vector<std::string> names;
  size_t max_entries = 0;
  int64_t dropped = 0;
  DeviceStats stats;
};

// The snapshot as JSON text, in PyTorch's layout where it has one ("segments" with "blocks",
// "device_traces" with "action", "addr", "size", "stream", "time_us"), plus wick's owner fields
// ("op", "module") and "stats" (memory_stats() keys).
std::string snapshot_to_json(const MemorySnapshot& snapshot);

}  // namespace wick::memory
