#include "jit/passes/memory_plan.h"

#include <algorithm>
#include <sstream>

namespace wick::jit {

// Note [static memory plan]
// Eager execution asks the allocator for each output as the op runs and gives it back when the
// last handle goes, so the peak is only known afterwards (a caching allocator makes that cheap but
// not smaller). A graph knows every buffer's life in advance: a base is live from the node that
// writes it to the last node that reads it or any view or version of it. Placing buffers in one
// arena is then interval packing. TensorFlow's and TFLite's planners use the heuristic here
// ("greedy by size"): the largest buffer first, each at the lowest offset whose bytes no
// overlapping-in-time buffer uses. The arena is at least the live peak (the most bytes live at
// one node), usually close to it.

namespace {
int64_t round_up(int64_t n) { return (n + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment; }
}  // namespace

MemoryPlan plan_memory(const Graph& g) {
  MemoryPlan plan;
  size_t n = g.values.size();
  plan.offset.assign(n, -1);
  plan.first.assign(n, -1);
  plan.last.assign(n, -1);
  std::vector<bool> is_output_storage(n, false);
  for (int o : g.outputs) {
    is_output_storage[static_cast<size_t>(g.value(o).base)] = true;
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    int at = static_cast<int>(i);
    for (size_t k = 0; k < node.params.size(); ++k) {
      int p = node.params[k];
      if (p < 0) continue;
      int base = g.value(p).base;
      bool write = node.kind != NodeKind::View && node.roles[k] == Role::Write;
      if (write && plan.first[static_cast<size_t>(base)] < 0)
        plan.first[static_cast<size_t>(base)] = at;
      plan.last[static_cast<size_t>(base)] = std::max(plan.last[static_cast<size_t>(base)], at);
    }
  }
  std::vector<int> buffers;
  for (size_t b = 0; b < n; ++b) {
    const Value& v = g.values[b];
    if (v.is_leaf() || v.base != v.id || plan.first[b] < 0 || is_output_storage[b]) continue;
    // An empty value (a batch of 0) has no bytes to place; it gets its own empty storage at
    // run time. Placing it would hand an empty arena to every view of it.
    if (v.nbytes() == 0) continue;
    if (plan.arena_value < 0) plan.arena_value = v.id;
    if (v.device != g.value(plan.arena_value).device) continue;
    buffers.push_back(static_cast<int>(b));
    plan.total_bytes += round_up(v.nbytes());
  }
  for (int o : g.outputs) {
    const Value& base = g.value(g.value(o).base);
    if (!base.is_leaf()) plan.output_bytes += base.nbytes();
  }
  plan.num_buffers = static_cast<int>(buffers.size());
  std::stable_sort(buffers.begin(), buffers.end(),
                   [&](int a, int b) { return g.value(a).nbytes() > g.value(b).nbytes(); });
  std::vector<int> placed;
  for (int b : buffers) {
    int64_t size = round_up(g.value(b).nbytes());
    // The placed buffers alive at the same time, by offset: take the first gap that fits.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (int p : placed) {
      bool overlap = plan.first[static_cast<size_t>(p)] <= plan.last[static_cast<size_t>(b)] &&
                     plan.first[static_cast<size_t>(b)] <= plan.last[static_cast<size_t>(p)];
      if (overlap) {
        busy.push_back({plan.offset[static_cast<size_t>(p)],
                        plan.offset[static_cast<size_t>(p)] + round_up(g.value(p).nbytes())});
      }
    }
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (auto [lo, hi] : busy) {
      if (lo - at >= size) break;
      at = std::max(at, hi);
    }
    plan.offset[static_cast<size_t>(b)] = at;
    plan.arena_bytes = std::max(plan.arena_bytes, at + size);
    placed.push_back(b);
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    int64_t live = 0;
    for (int b : buffers) {
      if (plan.first[static_cast<size_t>(b)] <= static_cast<int>(i) &&
          static_cast<int>(i) <= plan.last[static_cast<size_t>(b)]) {
        live += round_up(g.value(b).nbytes());
      }
    }
    plan.live_peak_bytes = std::max(plan.live_peak_bytes, live);
  }
  return plan;
}

std::string MemoryPlan::str() const {
  std::ostringstream os;
  os << "buffers planned:      " << num_buffers << "\n"
     << "without reuse:        " << total_bytes << " bytes\n"
     << "arena (planned peak): " << arena_bytes << " bytes\n"
     << "live peak (bound):    " << live_peak_bytes << " bytes\n"
     << "outputs (per run):    " << output_bytes << " bytes\n";
  return os.str();
}

}  // namespace wick::jit
