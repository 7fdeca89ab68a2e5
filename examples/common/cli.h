// Small helpers the example programs share: command-line flags, a progress bar, a metrics CSV
// and an SVG line chart. Nothing here is part of the library.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace wick::examples {

// Checked conversions of one command-line value, shared by the examples, benchmarks and tools/:
// the whole text must be a number (no "12abc", no empty text) within [min, max], and a real must
// be finite. Otherwise std::invalid_argument "[program] --name expects ...; got 'text'". The
// programs' main() turns std::invalid_argument into one line on stderr and exit status 2 (see
// exit_status), so every bad argument ends the same way.
int64_t parse_integer(const std::string& program, const std::string& name, const std::string& text,
                      int64_t min = INT64_MIN, int64_t max = INT64_MAX);
double parse_real(const std::string& program, const std::string& name, const std::string& text,
                  double min = -HUGE_VAL, double max = HUGE_VAL);
// What main() returns for an exception after printing it: 2 for a bad argument or input
// (std::invalid_argument, std::out_of_range: the caller's mistake), 1 for anything else.
int exit_status(const std::exception& error);

// --name value flags with defaults; --help prints them. Unknown flags and bad values throw
// std::invalid_argument naming the flag.
class Flags {
 public:
  Flags(std::string program, std::string summary);
  Flags& add(const std::string& name, const std::string& default_value, const std::string& help);
  // Returns false when --help was given (after printing the usage).
  bool parse(int argc, char** argv);
  std::string str(const std::string& name) const;
  int64_t integer(const std::string& name, int64_t min = INT64_MIN, int64_t max = INT64_MAX) const;
  double real(const std::string& name, double min = -HUGE_VAL, double max = HUGE_VAL) const;
  bool has(const std::string& name) const { return !str(name).empty(); }
  std::string command_line() const { return command_line_; }

 private:
  struct Flag {
    std::string value, help;
  };
  std::string program_, summary_, command_line_;
  std::map<std::string, Flag> flags_;
  std::vector<std::string> order_;
};

// One line that redraws itself: "[#####     ] 62/125  loss 0.41  acc 88.1%  2412 samples/s".
// On a terminal it updates in place; in a log file it prints a line every 10% so logs stay short.
class ProgressBar {
 public:
  ProgressBar(std::string label, int64_t total);
  void update(int64_t done, const std::string& status);
  void finish(const std::string& status);

 private:
  std::string label_;
  int64_t total_;
  bool terminal_;
  int64_t last_printed_decile_ = -1;
  std::chrono::steady_clock::time_point last_draw_;
};

// Appends rows to a CSV file with a fixed header (created with its folder if missing).
class CsvWriter {
 public:
  CsvWriter(const std::string& path, const std::vector<std::string>& columns);
  ~CsvWriter();
  void row(const std::vector<double>& values);

 private:
  std::FILE* file_ = nullptr;
  size_t columns_;
};

// A line chart as a standalone SVG: one panel per series group, shared x axis.
struct Series {
  std::string name;
  std::vector<double> x, y;
};
void write_svg_chart(const std::string& path, const std::string& title,
                     const std::vector<std::vector<Series>>& panels,
                     const std::vector<std::string>& panel_titles, const std::string& x_label);

// Training programs refuse a dataset that yields no batch - an empty one, or one smaller than a
// drop_last batch, or a data-parallel shard with nothing in it - with one clear error
// (std::invalid_argument, "[program] ..."), instead of dividing by zero and reporting a loss
// and accuracy of -nan%.
void require_batches(const char* program, const std::string& what, int64_t examples,
                     int64_t batch_size, int64_t batches);

// Creates the parent folders of `path`.
void make_parent_dirs(const std::string& path);

// The process's resident memory now, and the most it has used (from the kernel), in MiB.
double current_rss_mib();
double peak_rss_mib();

}  // namespace wick::examples
