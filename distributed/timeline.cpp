// Timeline recording, gathering across ranks, and the two pictures: a Chrome trace and an SVG.
#include "distributed/timeline.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "core/error.h"
#include "core/ops.h"
#include "core/trace_picture.h"

namespace wick::distributed {

// ---- recording ----------------------------------------------------------------------------------

void Timeline::start(ProcessGroup& group) {
  group.barrier()->wait();  // Note [timeline clocks]
  start_local();
}

void Timeline::start_local() {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.clear();
  origin_ = Clock::now();
  recording_ = true;
}

void Timeline::stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  recording_ = false;
}

double Timeline::micros(Clock::time_point t) const {
  return std::chrono::duration<double, std::micro>(t - origin_).count();
}

void Timeline::span(Lane lane, const std::string& name, Clock::time_point start,
                    Clock::time_point end, const std::string& detail) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!recording_) return;
  events_.push_back({lane, name, micros(start), micros(std::max(start, end)), detail});
}

void Timeline::mark(Lane lane, const std::string& name, Clock::time_point at,
                    const std::string& detail) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!recording_) return;
  events_.push_back({lane, name, micros(at), micros(at), detail});
}

Timeline::Scope::Scope(Timeline* timeline, Lane lane, std::string name)
    : timeline_(timeline), lane_(lane), name_(std::move(name)), start_(Clock::now()) {}

Timeline::Scope::~Scope() {
  if (timeline_) timeline_->span(lane_, name_, start_, Clock::now());
}

std::vector<TimelineEvent> Timeline::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

// ---- gathering ----------------------------------------------------------------------------------

namespace {

// One event per line, fields separated by tabs (names and details never hold tabs or newlines:
// they are replaced by spaces).
std::string clean(std::string s) {
  std::replace(s.begin(), s.end(), '\t', ' ');
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

std::string serialize(const std::vector<TimelineEvent>& events) {
  std::ostringstream os;
  os.precision(17);
  for (const TimelineEvent& e : events) {
    os << static_cast<int>(e.lane) << '\t' << e.start_us << '\t' << e.end_us << '\t'
       << clean(e.name) << '\t' << clean(e.detail) << '\n';
  }
  return os.str();
}

std::vector<TimelineEvent> deserialize(const std::string& text) {
  std::vector<TimelineEvent> events;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    std::string field;
    while (std::getline(fields, field, '\t')) f.push_back(field);
    if (f.size() < 4) continue;
    events.push_back({static_cast<Lane>(std::stoi(f[0])), f[3], std::stod(f[1]), std::stod(f[2]),
                      f.size() > 4 ? f[4] : ""});
  }
  return events;
}

}  // namespace

std::vector<std::vector<TimelineEvent>> Timeline::gather(ProcessGroup& group) const {
  // Two all-gathers: every rank's text length, then the texts padded to the longest.
  std::string text = serialize(events());
  Device device = group.device();
  Tensor length =
      tensor(std::vector<int64_t>{static_cast<int64_t>(text.size())}, TensorOptions(kInt64))
          .to(device);
  Tensor lengths = zeros({group.size()}, TensorOptions(kInt64).with_device(device));
  group.all_gather(lengths, length)->wait();
  std::vector<int64_t> sizes = lengths.cpu().to_vector<int64_t>();
  int64_t longest = std::max<int64_t>(1, *std::max_element(sizes.begin(), sizes.end()));
  Tensor mine = zeros({longest}, TensorOptions(kUInt8));
  std::copy(text.begin(), text.end(), mine.data<uint8_t>());
  Tensor all = zeros({longest * group.size()}, TensorOptions(kUInt8).with_device(device));
  group.all_gather(all, mine.to(device))->wait();
  Tensor host = all.cpu();
  const char* bytes = reinterpret_cast<const char*>(host.data<uint8_t>());
  std::vector<std::vector<TimelineEvent>> ranks;
  for (int r = 0; r < group.size(); ++r) {
    ranks.push_back(deserialize(std::string(bytes + r * longest, sizes[r])));
  }
  return ranks;
}

// ---- pictures -----------------------------------------------------------------------------------

namespace {

const char* lane_name(Lane lane) { return lane == Lane::Compute ? "compute" : "communication"; }

// A colour per kind of event, so forward, backward and communication read apart.
const char* colour_of(const TimelineEvent& e) {
  const std::string& n = e.name;
  if (n.rfind("all-reduce", 0) == 0) return "#8e44ad";
  if (n.rfind("wait", 0) == 0) return "#c0392b";
  if (n.rfind("forward", 0) == 0) return "#2e86c1";
  if (n.rfind("backward", 0) == 0) return "#e67e22";
  if (n.rfind("optimizer", 0) == 0) return "#27ae60";
  return "#7f8c8d";
}

// Two lanes per rank, compute then communication; a wait is drawn nested in what it interrupts.
std::vector<TraceLane> lanes_of(const std::vector<std::vector<TimelineEvent>>& ranks) {
  std::vector<TraceLane> lanes;
  for (size_t r = 0; r < ranks.size(); ++r) {
    for (Lane lane : {Lane::Compute, Lane::Communication}) {
      TraceLane out{"rank " + std::to_string(r), lane_name(lane), {}};
      for (const TimelineEvent& e : ranks[r]) {
        if (e.lane != lane) continue;
        out.spans.push_back(
            {e.name, e.start_us, e.end_us, e.detail, colour_of(e), e.name.rfind("wait", 0) == 0});
      }
      lanes.push_back(std::move(out));
    }
  }
  return lanes;
}

}  // namespace

void write_chrome_trace(const std::string& path,
                        const std::vector<std::vector<TimelineEvent>>& ranks) {
  wick::write_chrome_trace(path, lanes_of(ranks));
}

void write_timeline_svg(const std::string& path,
                        const std::vector<std::vector<TimelineEvent>>& ranks,
                        const std::string& title) {
  write_lanes_svg(path, lanes_of(ranks), title,
                  "forward (blue), backward (orange), gradient ready (ticks), bucket all-reduce "
                  "(purple), waiting for it (red), optimizer (green)");
}

}  // namespace wick::distributed
