#include "core/memory/trace.h"

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <unordered_map>

#include "core/error.h"
#include "core/memory/caching_allocator.h"
#include "core/memory/simulated_device.h"

namespace wick::memory {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The value after "key": in one of our own trace lines, or nullptr.
const char* find_value(const std::string& line, const char* key) {
  std::string pattern = std::string("\"") + key + "\":";
  size_t at = line.find(pattern);
  return at == std::string::npos ? nullptr : line.c_str() + at + pattern.size();
}

// The unsigned integer at `at` (a value in line `number` of `path`). strtoull alone would read
// "-5" as 2**64 - 5, "\"big\"" as 0 and saturate past 2**64; a trace with such a value is
// corrupt, and replaying it would report nonsense, so each of those is refused with its place.
uint64_t parse_count(const char* at, const std::string& path, int64_t number, const char* key,
                     const std::string& line) {
  char* end = nullptr;
  errno = 0;
  unsigned long long v =
      std::isdigit(static_cast<unsigned char>(*at)) ? std::strtoull(at, &end, 10) : 0;
  bool ok = end != nullptr && errno == 0 && (*end == ',' || *end == '}' || *end == ' ');
  check_value(ok, "read_trace", path, ":", number, ": \"", key,
              "\" must be a non-negative integer below 2**64; got ", line);
  return v;
}

}  // namespace

TraceRecorder::TraceRecorder(const std::string& path) : out_(path), start_ns_(now_ns()) {
  check_value(out_.good(), "TraceRecorder", "cannot open '", path, "' for writing");
}

void TraceRecorder::record(TraceEvent::Kind kind, const void* ptr, uint64_t size, StreamId stream) {
  double t_us = static_cast<double>(now_ns() - start_ns_) / 1000.0;
  char line[192];
  std::snprintf(line, sizeof(line),
                "{\"event\":\"%s\",\"ptr\":%" PRIu64 ",\"size\":%" PRIu64 ",\"stream\":%" PRIu64
                ",\"t_us\":%.3f}\n",
                kind == TraceEvent::Alloc ? "alloc" : "free",
                static_cast<uint64_t>(reinterpret_cast<uintptr_t>(ptr)), size, stream, t_us);
  std::lock_guard<std::mutex> lock(mutex_);
  out_ << line;
  ++events_;
}

int64_t TraceRecorder::num_events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

std::vector<TraceEvent> read_trace(const std::string& path) {
  std::ifstream in(path);
  check_value(in.good(), "read_trace", "cannot open '", path, "'");
  std::vector<TraceEvent> events;
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const char* kind = find_value(line, "event");
    const char* ptr = find_value(line, "ptr");
    const char* size = find_value(line, "size");
    check_value(kind != nullptr && ptr != nullptr && size != nullptr, "read_trace", path, ":",
                number, ": expected an event with \"event\", \"ptr\" and \"size\"; got ", line);
    TraceEvent e;
    if (std::strncmp(kind, "\"alloc\"", 7) == 0) {
      e.kind = TraceEvent::Alloc;
    } else {
      check_value(std::strncmp(kind, "\"free\"", 6) == 0, "read_trace", path, ":", number,
                  ": unknown event in ", line);
      e.kind = TraceEvent::Free;
    }
    e.ptr = parse_count(ptr, path, number, "ptr", line);
    e.size = parse_count(size, path, number, "size", line);
    // A size the int64 accounting of replay() cannot hold is no real allocation either.
    check_value(e.size <= static_cast<uint64_t>(INT64_MAX), "read_trace", path, ":", number,
                ": \"size\" of ", e.size, " bytes is larger than any device; got ", line);
    if (const char* stream = find_value(line, "stream")) {
      e.stream = parse_count(stream, path, number, "stream", line);
    }
    if (const char* t = find_value(line, "t_us")) {
      char* end = nullptr;
      e.time_us = std::strtod(t, &end);
      check_value(end != t && std::isfinite(e.time_us), "read_trace", path, ":", number,
                  ": \"t_us\" must be a finite number; got ", line);
    }
    events.push_back(e);
  }
  return events;
}

ReplayResult replay(const std::vector<TraceEvent>& events, const std::string& policy_name,
                    size_t capacity, const AllocatorConfig& config) {
  // The moment the program's live memory peaks does not depend on the policy: find it first.
  int64_t live = 0, peak_live = 0;
  size_t peak_at = 0;
  {
    std::unordered_map<uint64_t, uint64_t> sizes;
    for (size_t i = 0; i < events.size(); ++i) {
      const TraceEvent& e = events[i];
      if (e.kind == TraceEvent::Alloc) {
        sizes[e.ptr] = e.size;
        // Each size fits in int64 (read_trace checks), but a trace's live total need not:
        // refuse it rather than overflow (found by tests/fuzz/fuzz_trace.cpp).
        check_value(e.size <= static_cast<uint64_t>(INT64_MAX) &&
                        !__builtin_add_overflow(live, static_cast<int64_t>(e.size), &live),
                    "replay", "event ", i, ": the trace's live memory exceeds ", INT64_MAX,
                    " bytes (an allocation of ", e.size, " bytes)");
      } else if (auto it = sizes.find(e.ptr); it != sizes.end()) {
        live -= static_cast<int64_t>(it->second);
        sizes.erase(it);
      }
      if (live > peak_live) peak_live = live, peak_at = i;
    }
  }

  ReplayResult result;
  result.policy = policy_name;
  result.peak_requested = peak_live;
  SimulatedDevice device(capacity, SimulatedDevice::Backing::Virtual);
  std::unique_ptr<AllocatorPolicy> policy = make_policy(policy_name, &device, config);
  std::unordered_map<StreamId, StreamId> streams = {{0, kDefaultStream}};
  std::unordered_map<uint64_t, void*> live_ptrs;
  int64_t spent_ns = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    auto [stream, inserted] = streams.try_emplace(e.stream, 0);
    if (inserted) stream->second = device.create_stream();
    try {
      int64_t start = now_ns();
      if (e.kind == TraceEvent::Alloc) {
        live_ptrs[e.ptr] = policy->malloc(e.size, stream->second);
      } else if (auto it = live_ptrs.find(e.ptr); it != live_ptrs.end()) {
        policy->free(it->second);
        live_ptrs.erase(it);
      }
      spent_ns += now_ns() - start;
    } catch (const OutOfMemoryError& error) {
      result.out_of_memory = true;
      result.error = error.what();
      break;
    }
    if (i == peak_at) {
      DeviceStats s = policy->stats();
      int64_t free = s.reserved_bytes[kAggregate].current - s.allocated_bytes[kAggregate].current;
      int64_t largest = std::min<int64_t>(free, static_cast<int64_t>(policy->largest_free_block()));
      result.fragmentation = free > 0 ? static_cast<double>(free - largest) / free : 0.0;
    }
  }
  DeviceStats s = policy->stats();
  result.device_mallocs = s.num_device_alloc;
  result.device_frees = s.num_device_free;
  result.peak_reserved = s.reserved_bytes[kAggregate].peak;
  result.peak_allocated = s.allocated_bytes[kAggregate].peak;
  result.seconds = static_cast<double>(spent_ns) * 1e-9;
  return result;
}

std::string format_replay_table(const std::vector<ReplayResult>& results) {
  std::ostringstream os;
  char line[256];
  std::snprintf(line, sizeof(line), "%-12s %14s %14s %14s %14s %10s %9s\n", "policy",
                "device mallocs", "device frees", "peak reserved", "peak allocated", "fragment.",
                "time");
  os << line;
  for (const ReplayResult& r : results) {
    std::snprintf(line, sizeof(line), "%-12s %14lld %14lld %14s %14s %9.1f%% %7.1fms%s\n",
                  r.policy.c_str(), static_cast<long long>(r.device_mallocs),
                  static_cast<long long>(r.device_frees),
                  format_size(static_cast<uint64_t>(r.peak_reserved)).c_str(),
                  format_size(static_cast<uint64_t>(r.peak_allocated)).c_str(),
                  100.0 * r.fragmentation, r.seconds * 1e3, r.out_of_memory ? "  OOM" : "");
    os << line;
  }
  if (!results.empty()) {
    os << "peak requested by the program: "
       << format_size(static_cast<uint64_t>(results.front().peak_requested)) << "\n";
  }
  return os.str();
}

}  // namespace wick::memory
