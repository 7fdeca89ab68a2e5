// Google Benchmark prints one row per benchmark; the comparisons this project cares about (wick
// next to OpenBLAS, an op next to memcpy) need the rows side by side. This reporter prints the
// usual console output and keeps every result, so main() can print a comparison table at the end
// of the same run.
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace wick::bench {

class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (!run.error_occurred) runs_[run.benchmark_name()] = run;
    }
    ConsoleReporter::ReportRuns(runs);
  }

  // Seconds per iteration of the benchmark `name`, or 0 if it did not run.
  double seconds(const std::string& name) const {
    auto it = runs_.find(name);
    if (it == runs_.end()) return 0;
    return it->second.real_accumulated_time / static_cast<double>(it->second.iterations);
  }

  // A user counter of `name` (rates are already per second), or 0.
  double counter(const std::string& name, const std::string& key) const {
    auto it = runs_.find(name);
    if (it == runs_.end()) return 0;
    auto c = it->second.counters.find(key);
    return c == it->second.counters.end() ? 0 : c->second.value;
  }

 private:
  std::map<std::string, Run> runs_;
};

}  // namespace wick::bench
