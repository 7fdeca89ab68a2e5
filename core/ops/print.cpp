// Printing a tensor the way PyTorch does:
//   tensor([[ 1.0000, -2.5000],
//           [ 3.0000,  4.0000]], dtype=float64, grad_fn=<AddBackward>)
// Floats print with 4 decimals, or as "1." when every value is whole, or in scientific notation
// when magnitudes span more than 1000x; columns are right-aligned to one width; tensors with
// more than 1000 elements show their first and last 3 entries per dimension around "...".
// set_print_options (core/print.h) changes the digits, the 1000, the 3, the line width and the
// choice of scientific notation, as torch.set_printoptions does.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "core/print.h"

#include "autograd/node.h"
#include "core/ops.h"

namespace wick {

namespace {

PrintOptions g_options;

struct Formatter {
  enum class Mode { Integer, WholeFloat, Fixed, Scientific, Bool } mode = Mode::Fixed;
  int width = 1;

  std::string format(double v) const {
    char buf[64];
    switch (mode) {
      case Mode::Bool:
        return v != 0 ? "True" : "False";
      case Mode::Integer:
        std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
        break;
      case Mode::WholeFloat:
        if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
        std::snprintf(buf, sizeof(buf), "%.0f.", v);
        break;
      case Mode::Fixed:
        if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
        std::snprintf(buf, sizeof(buf), "%.*f", g_options.precision, v);
        break;
      case Mode::Scientific:
        if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
        std::snprintf(buf, sizeof(buf), "%.*e", g_options.precision, v);
        break;
    }
    return buf;
  }

  std::string pad(double v) const {
    std::string s = format(v);
    return std::string(width > static_cast<int>(s.size()) ? width - s.size() : 0, ' ') + s;
  }
};

Formatter make_formatter(DType dtype, const std::vector<double>& values) {
  Formatter f;
  bool whole = true;
  if (dtype == kBool) {
    f.mode = Formatter::Mode::Bool;
  } else if (!is_floating(dtype)) {
    f.mode = Formatter::Mode::Integer;
  } else {
    double max_abs = 0, min_abs = INFINITY;
    for (double v : values) {
      if (!std::isfinite(v)) continue;
      if (v != std::floor(v)) whole = false;
      double a = std::fabs(v);
      if (a == 0) continue;
      max_abs = std::max(max_abs, a);
      min_abs = std::min(min_abs, a);
    }
    if (min_abs == INFINITY) min_abs = max_abs;
    bool wide_range =
        max_abs > 0 && (max_abs / min_abs > 1000.0 || max_abs > 1e8 || min_abs < 1e-4);
    if (whole) {
      f.mode = max_abs > 1e8 ? Formatter::Mode::Scientific : Formatter::Mode::WholeFloat;
    } else {
      f.mode = wide_range ? Formatter::Mode::Scientific : Formatter::Mode::Fixed;
    }
  }
  for (double v : values) f.width = std::max<int>(f.width, f.format(v).size());
  if (is_floating(dtype) && g_options.sci_mode) {
    // An explicit choice overrides the values' after the column width is fixed: PyTorch pads to
    // the width of the automatic format (and never cuts), so a forced format can be narrower or
    // wider than its column.
    f.mode = *g_options.sci_mode ? Formatter::Mode::Scientific
             : whole             ? Formatter::Mode::WholeFloat
                                 : Formatter::Mode::Fixed;
  }
  return f;
}

// Indices shown along a dim of `size`: all, or the edges when summarizing.
std::vector<int64_t> shown(int64_t size, bool summarize) {
  std::vector<int64_t> idx;
  int64_t edge = g_options.edgeitems;
  if (summarize && size > 2 * edge) {
    for (int64_t i = 0; i < edge; ++i) idx.push_back(i);
    idx.push_back(-1);  // "..."
    for (int64_t i = size - edge; i < size; ++i) idx.push_back(i);
  } else {
    for (int64_t i = 0; i < size; ++i) idx.push_back(i);
  }
  return idx;
}

void collect(const Tensor& t, bool summarize, std::vector<double>& out) {
  if (t.dim() == 0) {
    out.push_back(t.item().to_double());
    return;
  }
  for (int64_t i : shown(t.size(0), summarize)) {
    if (i >= 0) collect(t.select(0, i), summarize, out);
  }
}

void render(const Tensor& t, const Formatter& f, bool summarize, int indent, std::string& out) {
  if (t.dim() == 0) {
    out += f.pad(t.item().to_double());
    return;
  }
  out += '[';
  std::vector<int64_t> idx = shown(t.size(0), summarize);
  if (t.dim() == 1) {
    int64_t per_line = std::max<int64_t>(1, (g_options.linewidth - indent) / (f.width + 2));
    for (size_t k = 0; k < idx.size(); ++k) {
      if (k > 0) out += (k % per_line == 0) ? ",\n" + std::string(indent + 1, ' ') : ", ";
      out += idx[k] < 0 ? std::string(" ...") : f.pad(t.select(0, idx[k]).item().to_double());
    }
  } else {
    std::string separator = "," + std::string(t.dim() - 1, '\n') + std::string(indent + 1, ' ');
    for (size_t k = 0; k < idx.size(); ++k) {
      if (k > 0) out += separator;
      if (idx[k] < 0) {
        out += "...";
      } else {
        render(t.select(0, idx[k]), f, summarize, indent + 1, out);
      }
    }
  }
  out += ']';
}

}  // namespace

const PrintOptions& get_print_options() { return g_options; }

void set_print_options(const PrintOptions& options) {
  check_value(options.precision >= 0 && options.precision <= 30, "set_printoptions",
              "precision must be in [0, 30]; got ", options.precision);
  check_value(options.threshold >= 0, "set_printoptions", "threshold must be non-negative; got ",
              options.threshold);
  check_value(options.edgeitems >= 0, "set_printoptions", "edgeitems must be non-negative; got ",
              options.edgeitems);
  check_value(options.linewidth > 0, "set_printoptions", "linewidth must be positive; got ",
              options.linewidth);
  g_options = options;
}

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  std::string out = "tensor(";
  Tensor host = detach().cpu();
  bool summarize = host.numel() > g_options.threshold;
  if (host.numel() == 0) {
    out += "[]";
  } else {
    std::vector<double> values;
    collect(host, summarize, values);
    render(host, make_formatter(dtype(), values), summarize, 7, out);
  }
  std::ostringstream suffix;
  if (numel() == 0 && dim() != 1) suffix << ", size=" << shape();
  if (!device().is_cpu()) suffix << ", device='" << device() << "'";
  if (dtype() != get_default_dtype() && dtype() != kInt64 && dtype() != kBool)
    suffix << ", dtype=" << dtype();
  if (auto fn = grad_fn()) {
    suffix << ", grad_fn=<" << fn->name() << ">";
  } else if (requires_grad()) {
    suffix << ", requires_grad=True";
  }
  return out + suffix.str() + ")";
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace wick
