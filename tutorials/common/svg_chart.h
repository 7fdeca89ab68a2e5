// A minimal SVG line chart for the labs' pictures (reserved vs allocated memory, the roofline):
// several named series on shared axes, linear or log-log, no dependencies.
#pragma once

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

namespace lab {

struct Series {
  std::string name, color;
  std::vector<double> x, y;
  bool points = false;  // dots instead of a line
};

inline void write_chart(const std::string& path, const std::string& title, const std::string& xlab,
                        const std::string& ylab, const std::vector<Series>& series,
                        bool log_axes = false) {
  const double W = 720, H = 420, L = 70, R = 20, T = 40, B = 50;
  auto tx = [&](double v) { return log_axes ? std::log10(std::max(v, 1e-12)) : v; };
  double x0 = 1e300, x1 = -1e300, y0 = log_axes ? 1e300 : 0, y1 = -1e300;
  for (const Series& s : series) {
    for (double v : s.x) x0 = std::min(x0, tx(v)), x1 = std::max(x1, tx(v));
    for (double v : s.y) y0 = std::min(y0, tx(v)), y1 = std::max(y1, tx(v));
  }
  if (x1 <= x0) x1 = x0 + 1;
  if (y1 <= y0) y1 = y0 + 1;
  auto px = [&](double v) { return L + (tx(v) - x0) / (x1 - x0) * (W - L - R); };
  auto py = [&](double v) { return H - B - (tx(v) - y0) / (y1 - y0) * (H - T - B); };
  std::ofstream out(path);
  out << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H
      << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' "
         "fill='white'/>\n<text x='"
      << W / 2 << "' y='22' text-anchor='middle' font-size='15'>" << title << "</text>\n";
  out << "<line x1='" << L << "' y1='" << H - B << "' x2='" << W - R << "' y2='" << H - B
      << "' stroke='black'/><line x1='" << L << "' y1='" << T << "' x2='" << L << "' y2='" << H - B
      << "' stroke='black'/>\n";
  for (int i = 0; i <= 4; ++i) {  // tick labels
    double fx = x0 + (x1 - x0) * i / 4, fy = y0 + (y1 - y0) * i / 4;
    double vx = log_axes ? std::pow(10, fx) : fx, vy = log_axes ? std::pow(10, fy) : fy;
    char bx[32], by[32];
    std::snprintf(bx, sizeof bx, "%.3g", vx);
    std::snprintf(by, sizeof by, "%.3g", vy);
    out << "<text x='" << px(log_axes ? vx : fx) << "' y='" << H - B + 16
        << "' text-anchor='middle'>" << bx << "</text><text x='" << L - 6 << "' y='"
        << py(log_axes ? vy : fy) + 4 << "' text-anchor='end'>" << by << "</text>\n";
  }
  out << "<text x='" << (L + W - R) / 2 << "' y='" << H - 12 << "' text-anchor='middle'>" << xlab
      << "</text>\n<text x='16' y='" << (T + H - B) / 2 << "' transform='rotate(-90 16 "
      << (T + H - B) / 2 << ")' text-anchor='middle'>" << ylab << "</text>\n";
  int k = 0;
  for (const Series& s : series) {
    if (s.points) {
      for (size_t i = 0; i < s.x.size(); ++i)
        out << "<circle cx='" << px(s.x[i]) << "' cy='" << py(s.y[i]) << "' r='4' fill='" << s.color
            << "'/>\n";
    } else {
      out << "<polyline fill='none' stroke-width='1.5' stroke='" << s.color << "' points='";
      for (size_t i = 0; i < s.x.size(); ++i) out << px(s.x[i]) << ',' << py(s.y[i]) << ' ';
      out << "'/>\n";
    }
    out << "<text x='" << L + 10 << "' y='" << T + 14 + 15 * k++ << "' fill='" << s.color << "'>"
        << s.name << "</text>\n";
  }
  out << "</svg>\n";
}

}  // namespace lab
