#include "core/memory/history.h"

#include <atomic>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/memory/policy.h"

namespace wick::memory {

namespace {

std::atomic<int> live_histories{0};
thread_local const char* t_op = nullptr;
thread_local std::string t_module;

}  // namespace

const char* action_name(HistoryEntry::Action action) {
  switch (action) {
    case HistoryEntry::Alloc:
      return "alloc";
    case HistoryEntry::Free:
      return "free";
    case HistoryEntry::SegmentAlloc:
      return "segment_alloc";
    case HistoryEntry::SegmentFree:
      return "segment_free";
    case HistoryEntry::Oom:
      return "oom";
  }
  return "?";
}

bool history_active() { return live_histories.load(std::memory_order_relaxed) > 0; }

OwnerScope::OwnerScope(const char* op, bool replace)
    : previous_(t_op), active_(history_active() && (replace || t_op == nullptr)) {
  if (active_) t_op = op;
}

OwnerScope::~OwnerScope() {
  if (active_) t_op = previous_;
}

std::string set_module_path(std::string path) {
  std::swap(path, t_module);
  return path;
}

const std::string& module_path() { return t_module; }
const char* current_op() { return t_op; }

MemoryHistory::MemoryHistory(size_t max_entries)
    : max_entries_(max_entries), start_(std::chrono::steady_clock::now()), names_{""} {
  check_value(max_entries > 0, "_record_memory_history", "max_entries must be positive; got ",
              max_entries);
  ids_.emplace("", 0);
  ++live_histories;
}

MemoryHistory::~MemoryHistory() { --live_histories; }

uint32_t MemoryHistory::intern(const char* name) {
  if (name == nullptr || *name == '\0') return 0;
  auto [it, inserted] = ids_.try_emplace(name, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.emplace_back(name);
  return it->second;
}

void MemoryHistory::record(HistoryEntry::Action action, uint64_t address, uint64_t size,
                           StreamId stream) {
  HistoryEntry e;
  e.action = action;
  e.address = address;
  e.size = size;
  e.stream = stream;
  e.time_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
  std::lock_guard<std::mutex> lock(mutex_);
  e.op = intern(t_op);
  e.module = intern(t_module.c_str());
  ++recorded_;
  if (ring_.size() < max_entries_) {
    ring_.push_back(e);
  } else {
    ring_[next_] = e;
    next_ = (next_ + 1) % max_entries_;
  }
}

std::vector<HistoryEntry> MemoryHistory::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<HistoryEntry> out(ring_.begin() + static_cast<int64_t>(next_), ring_.end());
  out.insert(out.end(), ring_.begin(), ring_.begin() + static_cast<int64_t>(next_));
  return out;
}

std::vector<std::string> MemoryHistory::names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return names_;
}

int64_t MemoryHistory::recorded() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_;
}

int64_t MemoryHistory::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorded_ - static_cast<int64_t>(ring_.size());
}

// ---- AllocatorPolicy's side (policy.h) ----------------------------------------------------------

void AllocatorPolicy::set_history(std::shared_ptr<MemoryHistory> history) {
  std::lock_guard<std::mutex> lock(history_mutex_);
  recording_ = history != nullptr;
  history_ = std::move(history);
}

std::shared_ptr<MemoryHistory> AllocatorPolicy::history() const {
  std::lock_guard<std::mutex> lock(history_mutex_);
  return history_;
}

void AllocatorPolicy::note_slow(HistoryEntry::Action action, uint64_t address, uint64_t size,
                                StreamId stream) const {
  std::shared_ptr<MemoryHistory> history = this->history();
  if (history) history->record(action, address, size, stream);
}

MemorySnapshot take_snapshot(const AllocatorPolicy& policy) {
  MemorySnapshot s;
  s.device = policy.backend()->name();
  s.policy = policy.name();
  // The viewer undoes the history backwards from the segments, so the two must agree: an entry
  // recorded between reading one and the other would be undone without having happened, or
  // never undone. A policy records under the lock its snapshot() takes, so an unchanged count
  // around snapshot() means nothing came in between.
  std::shared_ptr<MemoryHistory> history = policy.history();
  for (int attempt = 0;; ++attempt) {
    int64_t before = history ? history->recorded() : 0;
    if (history) {
      s.history = history->entries();
      s.names = history->names();
      s.max_entries = history->max_entries();
      s.dropped = history->dropped();
    }
    s.segments = policy.snapshot();
    if (!history || history->recorded() == before || attempt == 100) break;
  }
  s.stats = policy.stats();
  return s;
}

std::string snapshot_to_json(const MemorySnapshot& snapshot) {
  using nlohmann::ordered_json;
  ordered_json segments = ordered_json::array();
  for (const SegmentInfo& seg : snapshot.segments) {
    ordered_json blocks = ordered_json::array();
    uint64_t allocated = 0;
    for (const BlockInfo& b : seg.blocks) {
      if (b.allocated) allocated += b.size;
      // PyTorch's block states.
      const char* state = b.allocated        ? "active_allocated"
                          : b.pending_events ? "active_pending_free"
                                             : "inactive";
      blocks.push_back({{"address", b.address},
                        {"size", b.size},
                        {"requested_size", b.requested_size},
                        {"state", state}});
    }
    segments.push_back({{"address", seg.address},
                        {"total_size", seg.size},
                        {"stream", seg.stream},
                        {"segment_type", seg.small_pool ? "small" : "large"},
                        {"allocated_size", allocated},
                        {"blocks", std::move(blocks)}});
  }
  ordered_json trace = ordered_json::array();
  for (const HistoryEntry& e : snapshot.history) {
    trace.push_back({{"action", action_name(e.action)},
                     {"addr", e.address},
                     {"size", e.size},
                     {"stream", e.stream},
                     {"time_us", e.time_us},
                     {"op", snapshot.names.at(e.op)},
                     {"module", snapshot.names.at(e.module)}});
  }
  ordered_json stats = ordered_json::object();
  for (const auto& [key, value] : stats_to_map(snapshot.stats)) stats[key] = value;
  ordered_json out = {{"device", snapshot.device},
                      {"policy", snapshot.policy},
                      {"max_entries", snapshot.max_entries},
                      {"dropped_entries", snapshot.dropped},
                      {"segments", std::move(segments)},
                      // One list per device, as PyTorch writes it; a snapshot here is of one.
                      {"device_traces", ordered_json::array({std::move(trace)})},
                      {"stats", std::move(stats)}};
  return out.dump();
}

}  // namespace wick::memory
