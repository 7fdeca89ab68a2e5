// Timeline: what each rank did, and when, during a training step - so a student can see DDP's
// all-reduces overlap the rest of backward.
//
//   distributed::Timeline timeline;
//   ddp.reducer().set_timeline(&timeline);     // buckets' all-reduces and gradient-ready marks
//   timeline.start(group);                     // a barrier, then t = 0 on every rank
//   { auto s = timeline.scope(Lane::Compute, "forward"); ... }
//   { auto s = timeline.scope(Lane::Compute, "backward"); loss.backward(); }
//   timeline.stop();
//   auto ranks = timeline.gather(group);       // collective: every rank's events
//   if (rank == 0) write_chrome_trace("step.json", ranks), write_timeline_svg("step.svg", ranks);
//
// The JSON is the Chrome trace event format: open it in chrome://tracing or ui.perfetto.dev. Each
// rank is a process, with a "compute" and a "communication" thread.
//
// Note [timeline clocks]
// Times are measured from t = 0, which every rank takes just after a barrier in start(), so the
// ranks' lanes line up to within the barrier's skew (microseconds on one machine). The end of an
// all-reduce is when the rank's progress thread or wait first saw it done (Note [progress
// thread]), so it can be up to one polling period (50 us) late. On a GPU (nccl) the times are when
// the host launched and observed the work, not when the kernels ran.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "distributed/process_group.h"

namespace wick::distributed {

enum class Lane { Compute = 0, Communication = 1 };

struct TimelineEvent {
  Lane lane = Lane::Compute;
  std::string name;
  double start_us = 0, end_us = 0;  // equal for an instant (a mark)
  std::string detail;               // shown when the event is selected (e.g. bucket contents)
};

class Timeline {
 public:
  // Starts recording: a barrier on `group`, then t = 0 (Note [timeline clocks]). Clears events.
  void start(ProcessGroup& group);
  // Starts recording without a barrier (one process, or a unit test).
  void start_local();
  void stop();
  bool recording() const { return recording_; }

  // Record only while recording; outside that they do nothing, so hooks can call them always.
  void span(Lane lane, const std::string& name, Clock::time_point start, Clock::time_point end,
            const std::string& detail = "");
  void mark(Lane lane, const std::string& name, Clock::time_point at,
            const std::string& detail = "");

  // Records [construction, destruction) as one span.
  class Scope {
   public:
    Scope(Timeline* timeline, Lane lane, std::string name);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Timeline* timeline_;
    Lane lane_;
    std::string name_;
    Clock::time_point start_;
  };
  Scope scope(Lane lane, std::string name) { return Scope(this, lane, std::move(name)); }

  std::vector<TimelineEvent> events() const;
  // Collective: every rank's events, indexed by rank, on every rank.
  std::vector<std::vector<TimelineEvent>> gather(ProcessGroup& group) const;

 private:
  double micros(Clock::time_point t) const;

  mutable std::mutex mutex_;
  bool recording_ = false;
  Clock::time_point origin_;
  std::vector<TimelineEvent> events_;
};

// Chrome trace event JSON (chrome://tracing, ui.perfetto.dev): one process per rank.
void write_chrome_trace(const std::string& path,
                        const std::vector<std::vector<TimelineEvent>>& ranks);
// A standalone SVG: two lanes per rank (compute; communication), a millisecond axis, labels.
void write_timeline_svg(const std::string& path,
                        const std::vector<std::vector<TimelineEvent>>& ranks,
                        const std::string& title);

}  // namespace wick::distributed
