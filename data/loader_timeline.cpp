#include "data/loader_timeline.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/trace_picture.h"

namespace wick::data {

namespace {

struct ThreadContext {
  LoaderTimeline* timeline = nullptr;
  int lane = 0;
  int64_t batch = -1;
};
thread_local ThreadContext context;

const char* colour_of(const std::string& stage) {
  static const std::map<std::string, const char*> colours = {
      {"wait", "#c0392b"},       {"build batch", "#bdc3c7"}, {"read", "#2e86c1"},
      {"decode", "#e67e22"},     {"transform", "#8e44ad"},   {"collate", "#27ae60"},
      {"pin memory", "#16a085"}, {"to device", "#f1c40f"},   {"train step", "#34495e"}};
  auto it = colours.find(stage);
  return it == colours.end() ? "#7f8c8d" : it->second;
}

}  // namespace

LoaderTimeline::LoaderTimeline(size_t max_events)
    : origin_(Clock::now()), max_events_(max_events) {}

void LoaderTimeline::set_recording(bool on) {
  std::lock_guard<std::mutex> lock(mutex_);
  recording_ = on;
}

bool LoaderTimeline::recording() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recording_;
}

void LoaderTimeline::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.clear();
  dropped_ = 0;
  origin_ = Clock::now();
}

double LoaderTimeline::micros(Clock::time_point t) const {
  return std::chrono::duration<double, std::micro>(t - origin_).count();
}

void LoaderTimeline::record(const std::string& stage, int64_t batch, int lane,
                            Clock::time_point start, Clock::time_point end) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!recording_) return;
  if (events_.size() >= max_events_) {
    ++dropped_;
    return;
  }
  events_.push_back({stage, batch, lane, micros(start), micros(end)});
}

std::vector<LoaderEvent> LoaderTimeline::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

int64_t LoaderTimeline::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

std::string LoaderTimeline::summary() const {
  std::map<std::string, std::pair<double, int64_t>> totals;
  for (const LoaderEvent& e : events()) {
    auto& [ms, count] = totals[e.stage];
    ms += (e.end_us - e.start_us) / 1000.0;
    ++count;
  }
  std::string out;
  for (const auto& [stage, total] : totals) {
    char line[160];
    std::snprintf(line, sizeof(line), "%s%s %.1f ms (%lld)", out.empty() ? "" : ", ", stage.c_str(),
                  total.first, static_cast<long long>(total.second));
    out += line;
  }
  return out;
}

namespace {

std::vector<TraceLane> lanes_of(const std::vector<LoaderEvent>& events) {
  int lanes = 1;
  for (const LoaderEvent& e : events) lanes = std::max(lanes, e.lane + 1);
  std::vector<TraceLane> out;
  for (int lane = 0; lane < lanes; ++lane)
    out.push_back(
        {"data loader", lane == 0 ? "consumer" : "worker " + std::to_string(lane - 1), {}});
  for (const LoaderEvent& e : events) {
    // Per-example stages sit inside their batch's build, so they are drawn nested.
    bool inner = e.stage != "build batch" && e.stage != "wait" && e.stage != "to device" &&
                 e.stage != "train step";
    std::string detail = e.batch >= 0 ? "batch " + std::to_string(e.batch) : "";
    out[static_cast<size_t>(e.lane)].spans.push_back(
        {e.stage, e.start_us, e.end_us, detail, colour_of(e.stage), inner});
  }
  return out;
}

}  // namespace

void LoaderTimeline::write_chrome_trace(const std::string& path) const {
  wick::write_chrome_trace(path, lanes_of(events()));
}

void LoaderTimeline::write_svg(const std::string& path, const std::string& title) const {
  write_lanes_svg(path, lanes_of(events()), title,
                  "wait (red), build batch (grey) holding read (blue), decode (orange), transform "
                  "(purple), collate "
                  "(green), pin memory (teal); to device (yellow), train step (dark)");
}

LoaderSpan::LoaderSpan(std::string stage) : stage_(std::move(stage)), timeline_(context.timeline) {
  if (timeline_ != nullptr) start_ = LoaderTimeline::Clock::now();
}

LoaderSpan::~LoaderSpan() {
  if (timeline_ != nullptr)
    timeline_->record(stage_, context.batch, context.lane, start_, LoaderTimeline::Clock::now());
}

LoaderTimelineScope::LoaderTimelineScope(LoaderTimeline* timeline, int lane, int64_t batch)
    : saved_timeline_(context.timeline), saved_lane_(context.lane), saved_batch_(context.batch) {
  context = {timeline, lane, batch};
}

void LoaderTimelineScope::set_for_thread(LoaderTimeline* timeline, int lane, int64_t batch) {
  context = {timeline, lane, batch};
}

LoaderTimelineScope::~LoaderTimelineScope() {
  context = {saved_timeline_, saved_lane_, saved_batch_};
}

}  // namespace wick::data
