// Timeline recording, gathering across ranks, and the two pictures: a Chrome trace and an SVG.
#include "distributed/timeline.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "core/ops.h"

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

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else if (c == '&') {
      out += "&amp;";
    } else {
      out += c;
    }
  }
  return out;
}

std::ofstream open_for_writing(const char* op, const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream out(path);
  check_state(out.good(), op, "cannot write ", path);
  return out;
}

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

}  // namespace

void write_chrome_trace(const std::string& path,
                        const std::vector<std::vector<TimelineEvent>>& ranks) {
  std::ofstream out = open_for_writing("write_chrome_trace", path);
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  auto comma = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (size_t r = 0; r < ranks.size(); ++r) {
    comma();
    out << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << r
        << ", \"args\": {\"name\": \"rank " << r << "\"}}";
    for (Lane lane : {Lane::Compute, Lane::Communication}) {
      comma();
      out << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << r
          << ", \"tid\": " << static_cast<int>(lane) << ", \"args\": {\"name\": \""
          << lane_name(lane) << "\"}}";
    }
    for (const TimelineEvent& e : ranks[r]) {
      comma();
      bool instant = e.end_us == e.start_us;
      out << "{\"name\": \"" << json_escape(e.name) << "\", \"ph\": \"" << (instant ? "i" : "X")
          << "\", \"pid\": " << r << ", \"tid\": " << static_cast<int>(e.lane)
          << ", \"ts\": " << e.start_us;
      if (instant) {
        out << ", \"s\": \"t\"";
      } else {
        out << ", \"dur\": " << e.end_us - e.start_us;
      }
      out << ", \"args\": {\"detail\": \"" << json_escape(e.detail) << "\"}}";
    }
  }
  out << "\n]}\n";
}

void write_timeline_svg(const std::string& path,
                        const std::vector<std::vector<TimelineEvent>>& ranks,
                        const std::string& title) {
  double end_us = 1;
  for (const auto& events : ranks) {
    for (const TimelineEvent& e : events) end_us = std::max(end_us, e.end_us);
  }
  const double left = 160, width = 1000, lane_height = 34, rank_gap = 26, top = 60;
  const double scale = width / end_us;
  const double height = top + ranks.size() * (2 * lane_height + rank_gap) + 60;
  std::ofstream out = open_for_writing("write_timeline_svg", path);
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 30 << "\" height=\""
      << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"24\" font-size=\"15\">" << xml_escape(title) << "</text>\n"
      << "<text x=\"" << left << "\" y=\"42\" fill=\"#555\">forward (blue), backward (orange), "
      << "gradient ready (ticks), bucket all-reduce (purple), waiting for it (red), optimizer "
      << "(green)</text>\n";
  for (size_t r = 0; r < ranks.size(); ++r) {
    double y0 = top + r * (2 * lane_height + rank_gap);
    for (Lane lane : {Lane::Compute, Lane::Communication}) {
      double y = y0 + static_cast<int>(lane) * lane_height;
      out << "<text x=\"8\" y=\"" << y + lane_height / 2 + 4 << "\">rank " << r << " "
          << lane_name(lane) << "</text>\n<rect x=\"" << left << "\" y=\"" << y << "\" width=\""
          << width << "\" height=\"" << lane_height - 4 << "\" fill=\"#f4f6f7\"/>\n";
    }
    // Long spans first, so that shorter ones nested in them (a wait inside backward) and the
    // gradient-ready ticks are drawn on top.
    std::vector<TimelineEvent> events = ranks[r];
    std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
      return a.end_us - a.start_us > b.end_us - b.start_us;
    });
    for (const TimelineEvent& e : events) {
      double y = y0 + static_cast<int>(e.lane) * lane_height;
      double x = left + e.start_us * scale;
      if (e.end_us == e.start_us) {  // a mark: a thin line across the lane
        out << "<line x1=\"" << x << "\" y1=\"" << y << "\" x2=\"" << x << "\" y2=\""
            << y + lane_height - 4 << "\" stroke=\"#222\" stroke-width=\"1.2\"><title>"
            << xml_escape(e.name) << "</title></line>\n";
        continue;
      }
      double w = std::max(1.0, (e.end_us - e.start_us) * scale);
      // Nested spans (a wait inside backward) are drawn thinner, on top.
      bool inner = e.name.rfind("wait", 0) == 0;
      double inset = inner ? 8 : 0;
      out << "<rect x=\"" << x << "\" y=\"" << y + inset << "\" width=\"" << w << "\" height=\""
          << lane_height - 4 - 2 * inset << "\" fill=\"" << colour_of(e)
          << "\" opacity=\"0.85\"><title>" << xml_escape(e.name) << " ("
          << (e.end_us - e.start_us) / 1000.0 << " ms) " << xml_escape(e.detail)
          << "</title></rect>\n";
      if (w > 6.5 * e.name.size() * 0.6 && !inner) {
        out << "<text x=\"" << x + 3 << "\" y=\"" << y + lane_height / 2 + 2 << "\" fill=\"white\">"
            << xml_escape(e.name) << "</text>\n";
      }
    }
  }
  // The time axis in milliseconds, with about ten ticks.
  double axis_y = top + ranks.size() * (2 * lane_height + rank_gap);
  double step_ms = 1;
  for (double s : {0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0}) {
    step_ms = s;
    if (end_us / 1000.0 / s <= 10) break;
  }
  out << "<line x1=\"" << left << "\" y1=\"" << axis_y << "\" x2=\"" << left + width << "\" y2=\""
      << axis_y << "\" stroke=\"black\"/>\n";
  for (double ms = 0; ms * 1000.0 <= end_us; ms += step_ms) {
    double x = left + ms * 1000.0 * scale;
    out << "<line x1=\"" << x << "\" y1=\"" << axis_y << "\" x2=\"" << x << "\" y2=\"" << axis_y + 5
        << "\" stroke=\"black\"/><text x=\"" << x - 8 << "\" y=\"" << axis_y + 18 << "\">" << ms
        << "</text>\n";
  }
  out << "<text x=\"" << left + width / 2 - 20 << "\" y=\"" << axis_y + 36
      << "\">time (ms)</text>\n"
      << "</svg>\n";
}

}  // namespace wick::distributed
