#include "core/memory/alloc_stats.h"

#include <cstdio>
#include <sstream>
#include <vector>

namespace wick::memory {

namespace {

const char* const kStatTypeNames[kNumStatTypes] = {"all", "small_pool", "large_pool"};

void reset_array(StatArray& a, bool peak) {
  for (Stat& s : a) peak ? s.reset_peak() : s.reset_accumulated();
}

template <class F>
void for_each_array(DeviceStats& s, F f) {
  for (StatArray* a :
       {&s.allocation, &s.segment, &s.active, &s.inactive_split, &s.allocated_bytes,
        &s.reserved_bytes, &s.active_bytes, &s.inactive_split_bytes, &s.requested_bytes}) {
    f(*a);
  }
}

void add_stat(std::map<std::string, int64_t>& out, const std::string& prefix, const Stat& s) {
  out[prefix + ".current"] = s.current;
  out[prefix + ".peak"] = s.peak;
  out[prefix + ".allocated"] = s.allocated;
  out[prefix + ".freed"] = s.freed;
}

// torch.cuda.memory_summary's formatters: a unit is chosen from the first column's value (the
// "preferred" value) so a row reads in one unit; the next unit starts at 768 of the previous one.
std::string format_table_size(int64_t size, double preferred) {
  const char* units[] = {"B  ", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  while (unit < 5 && preferred >= 768 * 1024) {
    size /= 1024;
    preferred /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%6lld %s", static_cast<long long>(size), units[unit]);
  return buf;
}

std::string format_table_count(int64_t count, double preferred) {
  const char* units[] = {" ", "K", "M"};
  int unit = 0;
  while (unit < 2 && preferred >= 750 * 1000) {
    count /= 1000;
    preferred /= 1000;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%7lld %s ", static_cast<long long>(count), units[unit]);
  return buf;
}

std::string row(const std::string& name, const Stat& s, const Stat& preferred, bool bytes) {
  auto fmt = [&](int64_t v, int64_t pref) {
    return bytes ? format_table_size(v, static_cast<double>(pref))
                 : format_table_count(v, static_cast<double>(pref));
  };
  char buf[128];
  std::snprintf(buf, sizeof(buf), " %-21s | %s | %s | %s | %s ", name.c_str(),
                fmt(s.current, preferred.current).c_str(), fmt(s.peak, preferred.peak).c_str(),
                fmt(s.allocated, preferred.allocated).c_str(),
                fmt(s.freed, preferred.freed).c_str());
  return buf;
}

}  // namespace

void DeviceStats::reset_accumulated() {
  for_each_array(*this, [](StatArray& a) { reset_array(a, false); });
  oversize_allocations.reset_accumulated();
  oversize_segments.reset_accumulated();
  num_alloc_retries = num_ooms = num_sync_all_streams = 0;
  num_device_alloc = num_device_free = 0;
}

void DeviceStats::reset_peak() {
  for_each_array(*this, [](StatArray& a) { reset_array(a, true); });
  oversize_allocations.reset_peak();
  oversize_segments.reset_peak();
}

std::map<std::string, int64_t> stats_to_map(const DeviceStats& s) {
  std::map<std::string, int64_t> out;
  const std::pair<const char*, const StatArray*> arrays[] = {
      {"allocation", &s.allocation},
      {"segment", &s.segment},
      {"active", &s.active},
      {"inactive_split", &s.inactive_split},
      {"allocated_bytes", &s.allocated_bytes},
      {"reserved_bytes", &s.reserved_bytes},
      {"active_bytes", &s.active_bytes},
      {"inactive_split_bytes", &s.inactive_split_bytes},
      {"requested_bytes", &s.requested_bytes},
  };
  for (const auto& [name, array] : arrays) {
    for (int t = 0; t < kNumStatTypes; ++t) {
      add_stat(out, std::string(name) + "." + kStatTypeNames[t], (*array)[t]);
    }
  }
  add_stat(out, "oversize_allocations", s.oversize_allocations);
  add_stat(out, "oversize_segments", s.oversize_segments);
  out["num_alloc_retries"] = s.num_alloc_retries;
  out["num_ooms"] = s.num_ooms;
  out["num_sync_all_streams"] = s.num_sync_all_streams;
  out["num_device_alloc"] = s.num_device_alloc;
  out["num_device_free"] = s.num_device_free;
  out["max_split_size"] = s.max_split_size;
  return out;
}

std::string memory_summary(const DeviceStats& s, const std::string& title, bool abbreviated) {
  const std::string rule(75, '='), thin(75, '-');
  std::vector<std::string> lines;
  char buf[160];
  lines.push_back(rule);
  std::snprintf(buf, sizeof(buf), " %-73s ", (" wick memory summary, " + title).c_str());
  lines.push_back(buf);
  lines.push_back(thin);
  std::snprintf(buf, sizeof(buf), "  %9s CUDA OOMs: %-12lld | %6s cudaMalloc retries: %-8lld  ", "",
                static_cast<long long>(s.num_ooms), "",
                static_cast<long long>(s.num_alloc_retries));
  lines.push_back(buf);
  lines.push_back(rule);
  lines.push_back("        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  ");

  struct Metric {
    const StatArray* stat;
    const char* name;
    bool bytes;
  };
  const Metric metrics[] = {
      {&s.allocated_bytes, "Allocated memory", true},
      {&s.active_bytes, "Active memory", true},
      {&s.requested_bytes, "Requested memory", true},
      {&s.reserved_bytes, "GPU reserved memory", true},
      {&s.inactive_split_bytes, "Non-releasable memory", true},
      {&s.allocation, "Allocations", false},
      {&s.active, "Active allocs", false},
      {&s.segment, "GPU reserved segments", false},
      {&s.inactive_split, "Non-releasable allocs", false},
  };
  for (const Metric& m : metrics) {
    lines.push_back(thin);
    const Stat& all = (*m.stat)[kAggregate];
    lines.push_back(row(m.name, all, all, m.bytes));
    if (!abbreviated) {
      lines.push_back(row("      from large pool", (*m.stat)[kLargePool], all, m.bytes));
      lines.push_back(row("      from small pool", (*m.stat)[kSmallPool], all, m.bytes));
    }
  }
  for (auto [stat, name] :
       {std::pair<const Stat*, const char*>{&s.oversize_allocations, "Oversize allocations"},
        {&s.oversize_segments, "Oversize GPU segments"}}) {
    lines.push_back(thin);
    lines.push_back(row(name, *stat, *stat, false));
  }
  lines.push_back(rule);

  std::ostringstream os;
  for (const std::string& line : lines) os << '|' << line << "|\n";
  return os.str();
}

std::string format_size(uint64_t bytes) {
  char buf[64];
  if (bytes <= 1024) {
    std::snprintf(buf, sizeof(buf), "%llu bytes", static_cast<unsigned long long>(bytes));
  } else if (bytes <= (uint64_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.2f KiB", static_cast<double>(bytes) / 1024.0);
  } else if (bytes <= (uint64_t{1} << 30)) {
    std::snprintf(buf, sizeof(buf), "%.2f MiB", static_cast<double>(bytes) / 1048576.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", static_cast<double>(bytes) / 1073741824.0);
  }
  return buf;
}

}  // namespace wick::memory
