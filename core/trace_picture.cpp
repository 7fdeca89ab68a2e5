#include "core/trace_picture.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.h"

namespace wick {

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

}  // namespace

void write_chrome_trace(const std::string& path, const std::vector<TraceLane>& lanes) {
  std::ofstream out = open_for_writing("write_chrome_trace", path);
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  bool first = true;
  auto comma = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  std::map<std::string, size_t> pids;
  for (size_t tid = 0; tid < lanes.size(); ++tid) {
    const TraceLane& lane = lanes[tid];
    auto [it, is_new] = pids.emplace(lane.process, pids.size());
    size_t pid = it->second;
    if (is_new) {
      comma();
      out << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << pid
          << ", \"args\": {\"name\": \"" << json_escape(lane.process) << "\"}}";
    }
    comma();
    out << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << pid << ", \"tid\": " << tid
        << ", \"args\": {\"name\": \"" << json_escape(lane.thread) << "\"}}";
    for (const TraceSpan& e : lane.spans) {
      comma();
      bool instant = e.end_us == e.start_us;
      out << "{\"name\": \"" << json_escape(e.name) << "\", \"ph\": \"" << (instant ? "i" : "X")
          << "\", \"pid\": " << pid << ", \"tid\": " << tid << ", \"ts\": " << e.start_us;
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

void write_lanes_svg(const std::string& path, const std::vector<TraceLane>& lanes,
                     const std::string& title, const std::string& legend) {
  double end_us = 1;
  for (const TraceLane& lane : lanes)
    for (const TraceSpan& e : lane.spans) end_us = std::max(end_us, e.end_us);
  const double left = 160, width = 1000, lane_height = 34, process_gap = 26, top = 60;
  const double scale = width / end_us;
  std::vector<double> lane_y;  // each lane's top, a gap where the process changes
  double y = top;
  for (size_t i = 0; i < lanes.size(); ++i) {
    if (i > 0 && lanes[i].process != lanes[i - 1].process) y += process_gap;
    lane_y.push_back(y);
    y += lane_height;
  }
  const double axis_y = y + 10, height = axis_y + 60;
  std::ofstream out = open_for_writing("write_lanes_svg", path);
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 30 << "\" height=\""
      << height << "\" font-family=\"sans-serif\" font-size=\"11\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"24\" font-size=\"15\">" << xml_escape(title) << "</text>\n"
      << "<text x=\"" << left << "\" y=\"42\" fill=\"#555\">" << xml_escape(legend) << "</text>\n";
  for (size_t i = 0; i < lanes.size(); ++i) {
    double y0 = lane_y[i];
    out << "<text x=\"8\" y=\"" << y0 + lane_height / 2 + 4 << "\">"
        << xml_escape(lanes[i].process + " " + lanes[i].thread) << "</text>\n<rect x=\"" << left
        << "\" y=\"" << y0 << "\" width=\"" << width << "\" height=\"" << lane_height - 4
        << "\" fill=\"#f4f6f7\"/>\n";
    std::vector<TraceSpan> spans = lanes[i].spans;
    std::stable_sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
      return a.end_us - a.start_us > b.end_us - b.start_us;
    });
    for (const TraceSpan& e : spans) {
      double x = left + e.start_us * scale;
      if (e.end_us == e.start_us) {  // a mark: a thin line across the lane
        out << "<line x1=\"" << x << "\" y1=\"" << y0 << "\" x2=\"" << x << "\" y2=\""
            << y0 + lane_height - 4 << "\" stroke=\"#222\" stroke-width=\"1.2\"><title>"
            << xml_escape(e.name) << "</title></line>\n";
        continue;
      }
      double w = std::max(1.0, (e.end_us - e.start_us) * scale);
      double inset = e.inner ? 8 : 0;
      out << "<rect x=\"" << x << "\" y=\"" << y0 + inset << "\" width=\"" << w << "\" height=\""
          << lane_height - 4 - 2 * inset << "\" fill=\"" << e.colour
          << "\" opacity=\"0.85\"><title>" << xml_escape(e.name) << " ("
          << (e.end_us - e.start_us) / 1000.0 << " ms) " << xml_escape(e.detail)
          << "</title></rect>\n";
      if (w > 6.5 * e.name.size() * 0.6 && !e.inner) {
        out << "<text x=\"" << x + 3 << "\" y=\"" << y0 + lane_height / 2 + 2
            << "\" fill=\"white\">" << xml_escape(e.name) << "</text>\n";
      }
    }
  }
  // The time axis in milliseconds, with about ten ticks.
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

}  // namespace wick
