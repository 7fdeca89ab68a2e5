// Pictures of what happened when: spans on named lanes, written as a Chrome trace (JSON for
// chrome://tracing and ui.perfetto.dev) and as a standalone SVG. Used by DDP's step timeline
// (distributed/timeline.h: a process per rank, lanes compute and communication) and by the data
// loader's (data/loader_timeline.h: lanes for the consumer and each worker), so both draw alike.
#pragma once

#include <string>
#include <vector>

namespace wick {

struct TraceSpan {
  std::string name;
  double start_us = 0, end_us = 0;  // equal for an instant (a mark)
  std::string detail;               // shown when the span is selected or hovered
  std::string colour = "#7f8c8d";
  bool inner = false;  // drawn thinner, on top: a span nested in a longer one on the same lane
};

struct TraceLane {
  std::string process;  // lanes of one process are drawn together (a rank; "data loader")
  std::string thread;   // the lane's own name ("compute", "worker 1")
  std::vector<TraceSpan> spans;
};

// Processes become pids and lanes tids, in order of first appearance.
void write_chrome_trace(const std::string& path, const std::vector<TraceLane>& lanes);
// Lanes stacked top to bottom, a gap between processes, a millisecond axis; `legend` is a line
// under the title. Longer spans are drawn first so the spans nested in them stay visible.
void write_lanes_svg(const std::string& path, const std::vector<TraceLane>& lanes,
                     const std::string& title, const std::string& legend);

}  // namespace wick
