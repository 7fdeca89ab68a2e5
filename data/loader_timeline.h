// Where a batch's time went: spans on the loader's lanes (the consumer and each worker), for a
// Chrome trace and an SVG (core/trace_picture.h).
//
//   auto timeline = std::make_shared<data::LoaderTimeline>();
//   options.timeline = timeline;              // the DataLoader records into it
//   for (Batch& b : loader) {
//     { data::LoaderSpan s("to device"); ... }  // the training loop may add its own spans
//   }
//   timeline->write_svg("loader.svg", "MNIST, 2 workers");
//
// Stages: "wait" (the consumer blocked for its next batch), "build batch" (a worker's, or with no
// workers the consumer's), inside it per example "read" (bytes from a file or store), "decode"
// (image or Example decoding) and "transform", and per batch "collate" and "pin memory", and
// whatever the caller records ("to device", "train step"). A dataset marks its own stages with
// LoaderSpan; it costs one thread-local test when no timeline is recording.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace wick::data {

struct LoaderEvent {
  std::string stage;
  int64_t batch = -1;  // the batch being built or waited for; -1 outside one
  int lane = 0;        // 0: the consumer (the training loop), w + 1: worker w
  double start_us = 0, end_us = 0;
};

class LoaderTimeline {
 public:
  using Clock = std::chrono::steady_clock;
  // At most `max_events` are kept (later ones are counted in dropped()), so a forgotten timeline
  // cannot grow without bound.
  explicit LoaderTimeline(size_t max_events = 200000);

  void clear();  // forgets the events and restarts the clock
  // While false, record() ignores spans: a program records one epoch and then stops, although
  // its loader keeps the timeline.
  void set_recording(bool on);
  bool recording() const;
  void record(const std::string& stage, int64_t batch, int lane, Clock::time_point start,
              Clock::time_point end);
  std::vector<LoaderEvent> events() const;
  int64_t dropped() const;
  double micros(Clock::time_point t) const;

  // Per stage: total milliseconds and count, e.g. "decode 41.2 ms (2000)", for the summary.
  std::string summary() const;
  void write_chrome_trace(const std::string& path) const;
  void write_svg(const std::string& path, const std::string& title) const;

 private:
  mutable std::mutex mutex_;
  Clock::time_point origin_;
  size_t max_events_;
  int64_t dropped_ = 0;
  bool recording_ = true;
  std::vector<LoaderEvent> events_;
};

// Records [construction, destruction) as `stage` into the timeline this thread is recording for
// (set by the DataLoader around each batch it builds or waits for), or does nothing.
class LoaderSpan {
 public:
  explicit LoaderSpan(std::string stage);
  ~LoaderSpan();
  LoaderSpan(const LoaderSpan&) = delete;
  LoaderSpan& operator=(const LoaderSpan&) = delete;

 private:
  std::string stage_;  // short names stay in the string's own buffer: no allocation
  LoaderTimeline* timeline_;
  LoaderTimeline::Clock::time_point start_;
};

// Makes this thread record into `timeline` (may be null: stop) as `lane`, for batch `batch`,
// until destroyed, when the previous setting returns.
class LoaderTimelineScope {
 public:
  LoaderTimelineScope(LoaderTimeline* timeline, int lane, int64_t batch);
  ~LoaderTimelineScope();
  LoaderTimelineScope(const LoaderTimelineScope&) = delete;
  // The same without the restoring: the consumer thread keeps recording as lane 0 for the batch
  // it last received, so the training loop's own LoaderSpans land on the timeline.
  static void set_for_thread(LoaderTimeline* timeline, int lane, int64_t batch);
  LoaderTimelineScope& operator=(const LoaderTimelineScope&) = delete;

 private:
  LoaderTimeline* saved_timeline_;
  int saved_lane_;
  int64_t saved_batch_;
};

}  // namespace wick::data
