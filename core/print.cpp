// Printing a tensor the way PyTorch does:
//   tensor([[ 1.0000, -2.5000],
//           [ 3.0000,  4.0000]], dtype=float64, grad_fn=<AddBackward>)
// Floats print with 4 decimals, or as "1." when every value is whole, or in scientific notation
// when magnitudes span more than 1000x; columns are right-aligned to one width; tensors with
// more than 1000 elements show their first and last 3 entries per dimension around "...".
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/node.h"
#include "core/ops.h"

namespace wick {

namespace {

constexpr int64_t kSummarizeThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int64_t kLineWidth = 80;

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
        std::snprintf(buf, sizeof(buf), "%.4f", v);
        break;
      case Mode::Scientific:
        if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
        std::snprintf(buf, sizeof(buf), "%.4e", v);
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
  if (dtype == kBool) {
    f.mode = Formatter::Mode::Bool;
  } else if (!is_floating(dtype)) {
    f.mode = Formatter::Mode::Integer;
  } else {
    bool whole = true;
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
  return f;
}

// Indices shown along a dim of `size`: all, or the edges when summarizing.
std::vector<int64_t> shown(int64_t size, bool summarize) {
  std::vector<int64_t> idx;
  if (summarize && size > 2 * kEdgeItems) {
    for (int64_t i = 0; i < kEdgeItems; ++i) idx.push_back(i);
    idx.push_back(-1);  // "..."
    for (int64_t i = size - kEdgeItems; i < size; ++i) idx.push_back(i);
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
    int64_t per_line = std::max<int64_t>(1, (kLineWidth - indent) / (f.width + 2));
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

std::string Tensor::str() const {
  if (!defined()) return "tensor(undefined)";
  std::string out = "tensor(";
  Tensor host = detach().cpu();
  bool summarize = host.numel() > kSummarizeThreshold;
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
  if (dtype() != kFloat32 && dtype() != kInt64 && dtype() != kBool) suffix << ", dtype=" << dtype();
  if (auto fn = grad_fn()) {
    suffix << ", grad_fn=<" << fn->name() << ">";
  } else if (requires_grad()) {
    suffix << ", requires_grad=True";
  }
  return out + suffix.str() + ")";
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace wick
