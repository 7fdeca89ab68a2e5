// Static memory planning (Note [static memory plan] in memory_plan.cpp): before the graph runs,
// every intermediate buffer gets an offset in one arena, reusing the bytes of buffers that are
// dead by then. The arena's size is the graph's peak, known ahead of time.
#pragma once

#include <string>
#include <vector>

#include "jit/graph.h"

namespace wick::jit {

struct MemoryPlan {
  std::vector<int64_t> offset;   // by base value id: its byte offset in the arena, -1 if unplanned
  std::vector<int> first, last;  // by base value id: the node that writes it, the last that reads
  int64_t arena_bytes = 0;       // the planned peak: the arena the executor allocates once
  int64_t total_bytes = 0;       // every planned buffer with a storage of its own (no reuse)
  int64_t live_peak_bytes = 0;   // the most bytes live at one node: no plan can do better
  int64_t output_bytes = 0;      // the graph's outputs, allocated on each run (they are returned)
  int num_buffers = 0;
  int arena_value = -1;     // a planned value: the arena lives on its device (the others' too)
  std::string str() const;  // the figures and the reuse ratio, one line each
};

constexpr int64_t kPlanAlignment = 64;  // bytes: a cache line, and a multiple of every dtype

// Plans the internal buffers of `g` (not leaves, not the outputs' storages) on the device of the
// first one (buffers on another device stay unplanned): greedy by size, largest first, each at
// the lowest offset that overlaps no buffer live at the same time.
MemoryPlan plan_memory(const Graph& g);

}  // namespace wick::jit
