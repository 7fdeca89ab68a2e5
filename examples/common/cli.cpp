#include "examples/common/cli.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace wick::examples {

Flags::Flags(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

Flags& Flags::add(const std::string& name, const std::string& default_value,
                  const std::string& help) {
  flags_[name] = {default_value, help};
  order_.push_back(name);
  return *this;
}

bool Flags::parse(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) command_line_ += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("%s\n\nusage: %s [flags]\n", summary_.c_str(), program_.c_str());
      for (const std::string& name : order_) {
        std::printf("  --%-14s %s (default: %s)\n", name.c_str(), flags_[name].help.c_str(),
                    flags_[name].value.empty() ? "none" : flags_[name].value.c_str());
      }
      return false;
    }
    if (arg.rfind("--", 0) != 0 || !flags_.count(arg.substr(2))) {
      throw std::invalid_argument("[" + program_ + "] unknown flag '" + arg + "' (see --help)");
    }
    if (i + 1 >= argc) throw std::invalid_argument("[" + program_ + "] " + arg + " needs a value");
    flags_[arg.substr(2)].value = argv[++i];
  }
  return true;
}

std::string Flags::str(const std::string& name) const { return flags_.at(name).value; }

int64_t parse_integer(const std::string& program, const std::string& name, const std::string& text,
                      int64_t min, int64_t max) {
  size_t used = 0;
  int64_t out = 0;
  try {
    out = std::stoll(text, &used);
  } catch (const std::exception&) {  // not a number, or beyond int64 (std::out_of_range)
    used = 0;
  }
  if (used == 0 || used != text.size() || out < min || out > max) {
    std::string range = min == INT64_MIN && max == INT64_MAX ? ""
                        : max == INT64_MAX
                            ? " >= " + std::to_string(min)
                            : " in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    throw std::invalid_argument("[" + program + "] --" + name + " expects an integer" + range +
                                "; got '" + text + "'");
  }
  return out;
}

double parse_real(const std::string& program, const std::string& name, const std::string& text,
                  double min, double max) {
  size_t used = 0;
  double out = 0;
  try {
    out = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  // !(min <= out && out <= max) also refuses NaN; inf is refused as not finite.
  if (used == 0 || used != text.size() || !std::isfinite(out) || !(min <= out && out <= max)) {
    std::ostringstream range;
    if (min != -HUGE_VAL || max != HUGE_VAL) range << " in [" << min << ", " << max << "]";
    throw std::invalid_argument("[" + program + "] --" + name + " expects a finite number" +
                                range.str() + "; got '" + text + "'");
  }
  return out;
}

int exit_status(const std::exception& error) {
  bool bad_input = dynamic_cast<const std::invalid_argument*>(&error) != nullptr ||
                   dynamic_cast<const std::out_of_range*>(&error) != nullptr;
  return bad_input ? 2 : 1;
}

int64_t Flags::integer(const std::string& name, int64_t min, int64_t max) const {
  return parse_integer(program_, name, str(name), min, max);
}

double Flags::real(const std::string& name, double min, double max) const {
  return parse_real(program_, name, str(name), min, max);
}

ProgressBar::ProgressBar(std::string label, int64_t total)
    : label_(std::move(label)), total_(std::max<int64_t>(total, 1)), terminal_(isatty(1)) {}

void ProgressBar::update(int64_t done, const std::string& status) {
  auto now = std::chrono::steady_clock::now();
  int64_t decile = 10 * done / total_;
  bool draw = terminal_ ? now - last_draw_ > std::chrono::milliseconds(100) || done == total_
                        : decile != last_printed_decile_ && done > 0 && done < total_;
  if (!draw) return;
  last_draw_ = now;
  last_printed_decile_ = decile;
  int width = 24, filled = static_cast<int>(width * done / total_);
  std::printf("%s%s [%s%s] %lld/%lld  %s%s", terminal_ ? "\r" : "", label_.c_str(),
              std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(),
              static_cast<long long>(done), static_cast<long long>(total_), status.c_str(),
              terminal_ ? "\033[K" : "\n");
  std::fflush(stdout);
}

void ProgressBar::finish(const std::string& status) {
  // Redraw the full bar with the final status (in a log, replace the last 100% line's status).
  last_printed_decile_ = -1;
  last_draw_ = {};
  if (terminal_) {
    update(total_, status);
    std::printf("\n");
  } else {
    std::printf("%s done: %s\n", label_.c_str(), status.c_str());
  }
}

double current_rss_mib() {
  long pages = 0, resident = 0;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * static_cast<double>(sysconf(_SC_PAGESIZE)) / 1048576.0;
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // Linux reports KiB
}

void make_parent_dirs(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
}

CsvWriter::CsvWriter(const std::string& path, const std::vector<std::string>& columns)
    : columns_(columns.size()) {
  make_parent_dirs(path);
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) throw std::runtime_error("[metrics] cannot write " + path);
  for (size_t i = 0; i < columns.size(); ++i) {
    std::fprintf(file_, "%s%s", i ? "," : "", columns[i].c_str());
  }
  std::fprintf(file_, "\n");
  std::fflush(file_);
}

CsvWriter::~CsvWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void CsvWriter::row(const std::vector<double>& values) {
  if (values.size() != columns_) throw std::invalid_argument("[metrics] wrong number of values");
  for (size_t i = 0; i < values.size(); ++i) std::fprintf(file_, "%s%.6g", i ? "," : "", values[i]);
  std::fprintf(file_, "\n");
  std::fflush(file_);
}

void write_svg_chart(const std::string& path, const std::string& title,
                     const std::vector<std::vector<Series>>& panels,
                     const std::vector<std::string>& panel_titles, const std::string& x_label) {
  const double width = 720, panel_height = 220, left = 60, right = 30, top = 40, gap = 64;
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};
  double height = top + panels.size() * (panel_height + gap);
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height
      << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' "
         "fill='white'/>\n<text x='"
      << width / 2 << "' y='22' text-anchor='middle' font-size='15'>" << title << "</text>\n";
  for (size_t p = 0; p < panels.size(); ++p) {
    double y0 = top + p * (panel_height + gap), plot_w = width - left - right;
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    for (const Series& s : panels[p]) {
      for (size_t i = 0; i < s.x.size(); ++i) {
        xmin = std::min(xmin, s.x[i]), xmax = std::max(xmax, s.x[i]);
        ymin = std::min(ymin, s.y[i]), ymax = std::max(ymax, s.y[i]);
      }
    }
    if (!(xmax > xmin)) xmax = xmin + 1;
    if (!(ymax > ymin)) ymax = ymin + 1;
    auto px = [&](double x) { return left + (x - xmin) / (xmax - xmin) * plot_w; };
    auto py = [&](double y) {
      return y0 + panel_height - (y - ymin) / (ymax - ymin) * panel_height;
    };
    svg << "<rect x='" << left << "' y='" << y0 << "' width='" << plot_w << "' height='"
        << panel_height << "' fill='none' stroke='#999'/>\n";
    svg << "<text x='" << left << "' y='" << y0 - 6 << "'>" << panel_titles[p] << "</text>\n";
    // Ticks at round values (1, 2 or 5 times a power of ten), so the axis reads at a glance.
    auto ticks = [](double lo, double hi) {
      double raw = (hi - lo) / 4, step = std::pow(10.0, std::floor(std::log10(raw)));
      for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * step >= raw) {
          step *= m;
          break;
        }
      std::vector<double> values;
      for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
        values.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
      return values;
    };
    for (double v : ticks(ymin, ymax))
      svg << "<text x='" << left - 6 << "' y='" << py(v) + 4 << "' text-anchor='end'>" << v
          << "</text>\n<line x1='" << left << "' x2='" << left + plot_w << "' y1='" << py(v)
          << "' y2='" << py(v) << "' stroke='#eee'/>\n";
    for (double v : ticks(xmin, xmax))
      svg << "<text x='" << px(v) << "' y='" << y0 + panel_height + 16 << "' text-anchor='middle'>"
          << v << "</text>\n";
    svg << "<text x='" << left + plot_w << "' y='" << y0 + panel_height + 32
        << "' text-anchor='end'>" << x_label << "</text>\n";
    for (size_t s = 0; s < panels[p].size(); ++s) {
      const Series& series = panels[p][s];
      svg << "<polyline fill='none' stroke-width='1.5' stroke='" << colors[s % 5] << "' points='";
      for (size_t i = 0; i < series.x.size(); ++i)
        svg << px(series.x[i]) << ',' << py(series.y[i]) << ' ';
      svg << "'/>\n<text x='" << left + 8 << "' y='" << y0 + 16 + 14 * s << "' fill='"
          << colors[s % 5] << "'>" << series.name << "</text>\n";
    }
  }
  svg << "</svg>\n";
  make_parent_dirs(path);
  std::ofstream out(path);
  if (!out) throw std::runtime_error("[chart] cannot write " + path);
  out << svg.str();
}

void require_batches(const char* program, const std::string& what, int64_t examples,
                     int64_t batch_size, int64_t batches) {
  if (batches > 0) return;
  throw std::invalid_argument("[" + std::string(program) + "] " + what + " has " +
                              std::to_string(examples) + " examples, which make no batch of " +
                              std::to_string(batch_size) + "; there is nothing to train on or " +
                              "evaluate");
}

}  // namespace wick::examples
