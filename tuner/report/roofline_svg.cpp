// Roofline chart as SVG text. Plain string building: the chart has a few dozen elements and an
// SVG library would be a dependency for nothing.
#include "tuner/report/roofline_svg.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace tbtune {
namespace {

constexpr double kW = 900, kH = 680;
constexpr double kLeft = 90, kRight = 870, kTop = 50, kBottom = 600;

// A log10 axis over whole decades [10^lo, 10^hi].
struct Axis {
  int lo = 0, hi = 1;
  double px0 = 0, px1 = 1;  // screen coordinates of 10^lo and 10^hi
  [[nodiscard]] double at(double v) const {
    const double l = std::clamp(std::log10(std::max(v, 1e-300)), double(lo), double(hi));
    return px0 + (l - lo) / (hi - lo) * (px1 - px0);
  }
};

// Decades that hold every value with some air, at least `min_decades` wide.
Axis make_axis(const std::vector<double>& values, double px0, double px1, int min_decades) {
  double mn = 1e300, mx = 0;
  for (double v : values)
    if (v > 0) {
      mn = std::min(mn, v);
      mx = std::max(mx, v);
    }
  if (mx <= 0) mn = 1, mx = 10;
  Axis a;
  a.lo = int(std::floor(std::log10(mn / 1.5)));
  a.hi = int(std::ceil(std::log10(mx * 1.5)));
  if (a.hi - a.lo < min_decades) a.lo = a.hi - min_decades;
  a.px0 = px0;
  a.px1 = px1;
  return a;
}

std::string decade_label(int k) {
  if (k < -4 || k > 5) return fmt::format("1e{}", k);
  return fmt::format("{:g}", std::pow(10.0, k));
}

// "33.1 TB/s", "1.56 TB/s", "900 GB/s": bandwidths in bytes/s.
std::string rate(double v, const char* unit) {
  if (v >= 1e12) return fmt::format("{:.3g} T{}", v / 1e12, unit);
  return fmt::format("{:.3g} G{}", v / 1e9, unit);
}

void text(std::string& s, double x, double y, std::string_view body, const char* extra = "") {
  s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}>{}</text>\n", x, y, extra, xml_escape(body));
}

void line(std::string& s, double x0, double y0, double x1, double y1, const char* style) {
  s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" {}/>\n", x0, y0,
                   x1, y1, style);
}

}  // namespace

std::string xml_escape(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

RooflinePoint roofline_point(std::string label, double gcells, const ModelTerms& m, DType dtype) {
  const double S = dtype_bytes(dtype);
  RooflinePoint p;
  p.label = std::move(label);
  p.gflops = gcells * m.a_cmp;
  const double gm_bytes_per_cell_step = m.a_gm * m.d_gm * S / std::max(m.depth, 1);
  p.intensity = gm_bytes_per_cell_step > 0 ? m.a_cmp * m.d_cmp / gm_bytes_per_cell_step : 0;
  p.sm_intensity = m.a_sm > 0 ? m.a_cmp * m.d_cmp / (m.a_sm * m.d_sm * S) : 0;
  return p;
}

std::string roofline_svg(const DeviceProfile& d, DType dtype, const std::vector<RooflinePoint>& pts) {
  const double peak = (dtype == DType::Double ? d.fp64_flops : d.fp32_flops) / 1e9;  // GFLOP/s
  const double bgm = d.gm_bw / 1e9, bsm = d.sm_bw / 1e9;                           // GB/s
  std::vector<double> sm_int;  // distinct shared-memory intensities, one ceiling each
  for (const auto& p : pts)
    if (p.sm_intensity > 0 && std::none_of(sm_int.begin(), sm_int.end(), [&](double v) {
          return std::abs(v - p.sm_intensity) <= 1e-9 * v;
        }))
      sm_int.push_back(p.sm_intensity);

  // x spans both ridge points and every point; y the peak, the slope's foot and every point.
  std::vector<double> xs{peak / bgm, peak / bsm}, ys{peak};
  for (const auto& p : pts) {
    xs.push_back(p.intensity);
    ys.push_back(p.gflops);
  }
  const Axis ax = make_axis(xs, kLeft, kRight, 3);
  ys.push_back(bgm * std::pow(10.0, ax.lo));
  for (double v : sm_int) ys.push_back(bsm * v);
  const Axis ay = make_axis(ys, kBottom, kTop, 2);
  const double x_lo = std::pow(10.0, ax.lo), x_hi = std::pow(10.0, ax.hi);

  std::string s;
  s += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"13\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<defs><clipPath id=\"plot\"><rect x=\"{2}\" y=\"{3}\" width=\"{4}\" height=\"{5}\"/>"
      "</clipPath></defs>\n",
      kW, kH, kLeft, kTop, kRight - kLeft, kBottom - kTop);
  text(s, kW / 2, 30,
       fmt::format("Roofline: {} ({}, {} SMs)", d.name, dtype_name(dtype), d.sm_count),
       " text-anchor=\"middle\" font-size=\"16\" font-weight=\"bold\"");

  // Grid, ticks (minor ones at 2..9 x each decade) and decade labels.
  for (int k = ax.lo; k <= ax.hi; ++k) {
    const double x = ax.at(std::pow(10.0, k));
    line(s, x, kTop, x, kBottom, "stroke=\"#ddd\"");
    line(s, x, kBottom, x, kBottom + 6, "stroke=\"black\"");
    text(s, x, kBottom + 22, decade_label(k), " text-anchor=\"middle\"");
    for (int m = 2; m <= 9 && k < ax.hi; ++m) {
      const double xm = ax.at(m * std::pow(10.0, k));
      line(s, xm, kBottom, xm, kBottom + 3, "stroke=\"black\"");
    }
  }
  for (int k = ay.lo; k <= ay.hi; ++k) {
    const double y = ay.at(std::pow(10.0, k));
    line(s, kLeft, y, kRight, y, "stroke=\"#ddd\"");
    line(s, kLeft - 6, y, kLeft, y, "stroke=\"black\"");
    text(s, kLeft - 10, y + 4, decade_label(k), " text-anchor=\"end\"");
    for (int m = 2; m <= 9 && k < ay.hi; ++m) {
      const double ym = ay.at(m * std::pow(10.0, k));
      line(s, kLeft - 3, ym, kLeft, ym, "stroke=\"black\"");
    }
  }
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                   "stroke=\"black\"/>\n", kLeft, kTop, kRight - kLeft, kBottom - kTop);
  text(s, (kLeft + kRight) / 2, kBottom + 50,
       "operational intensity (flop per byte of global-memory traffic)", " text-anchor=\"middle\"");
  text(s, 0, 0, "performance (GFLOP/s)",
       fmt::format(" text-anchor=\"middle\" transform=\"translate(24,{:.1f}) rotate(-90)\"",
                   (kTop + kBottom) / 2).c_str());

  // Ceilings, clipped to the plot. A slope's on-screen angle is the same everywhere on log axes.
  const double decade_w = (kRight - kLeft) / (ax.hi - ax.lo);
  const double decade_h = (kBottom - kTop) / (ay.hi - ay.lo);
  const double slope_deg = -std::atan2(decade_h, decade_w) * 180.0 / 3.14159265358979;
  s += "<g clip-path=\"url(#plot)\">\n";
  line(s, ax.at(x_lo), ay.at(bgm * x_lo), ax.at(x_hi), ay.at(bgm * x_hi),
       "stroke=\"#1f77b4\" stroke-width=\"2.5\"");
  line(s, kLeft, ay.at(peak), kRight, ay.at(peak), "stroke=\"#d62728\" stroke-width=\"2.5\"");
  if (sm_int.empty())
    line(s, ax.at(x_lo), ay.at(bsm * x_lo), ax.at(x_hi), ay.at(bsm * x_hi),
         "stroke=\"#2ca02c\" stroke-width=\"2\" stroke-dasharray=\"8,4\"");
  for (double v : sm_int)
    line(s, kLeft, ay.at(bsm * v), kRight, ay.at(bsm * v),
         "stroke=\"#2ca02c\" stroke-width=\"2\" stroke-dasharray=\"8,4\"");
  s += "</g>\n";

  // Ceiling labels: the slopes' near their left end where they are inside the plot.
  auto slope_label = [&](double bw, const std::string& body, const char* color) {
    double lx = x_lo * 1.6;
    while (ay.at(bw * lx) > kBottom - 20 && lx < x_hi) lx *= 1.5;  // climb into view
    if (lx >= x_hi || ay.at(bw * lx) < kTop + 10) return;
    const double x = ax.at(lx), y = ay.at(bw * lx) - 6;
    text(s, x, y, body,
         fmt::format(" fill=\"{}\" transform=\"rotate({:.1f},{:.1f},{:.1f})\"", color, slope_deg,
                     x, y).c_str());
  };
  slope_label(bgm, "global memory " + rate(d.gm_bw, "B/s"), "#1f77b4");
  if (sm_int.empty()) slope_label(bsm, "shared memory " + rate(d.sm_bw, "B/s"), "#2ca02c");
  // Horizontal ceilings are labelled at their left end, above the line: the slopes are low there
  // and the points, which sit near the ridges, are usually to the right.
  text(s, kLeft + 8, ay.at(peak) - 6,
       fmt::format("{} peak {}", dtype == DType::Double ? "FP64" : "FP32", rate(peak * 1e9, "FLOP/s")),
       " fill=\"#d62728\"");
  // Shared-memory ceilings (one per winner's a_sm) are labelled at their right end, and a label
  // closer than a line of text to the one above it is left out rather than drawn over it.
  std::vector<double> sm_sorted(sm_int.begin(), sm_int.end());
  std::sort(sm_sorted.begin(), sm_sorted.end(), std::greater<>());
  double last_y = -1e9;
  for (double v : sm_sorted) {
    const double y = ay.at(bsm * v);
    if (y < kTop + 10 || y > kBottom || y - last_y < 14) continue;
    last_y = y;
    text(s, kRight - 8, y - 4, fmt::format("shared memory {} x {:.3g} flop/B", rate(d.sm_bw, "B/s"), v),
         " fill=\"#2ca02c\" text-anchor=\"end\"");
  }

  // Points last so they sit on top of the lines.
  for (const auto& p : pts) {
    const double x = ax.at(p.intensity > 0 ? p.intensity : x_lo);
    const double y = ay.at(p.gflops > 0 ? p.gflops : std::pow(10.0, ay.lo));
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"black\"><title>{}</title>"
                     "</circle>\n", x, y, xml_escape(p.label));
    // The stencil's name only (the first word); the whole label is the point's tooltip.
    text(s, x + 8, y + 4, p.label.substr(0, p.label.find(' ')));
  }
  s += "</svg>\n";
  return s;
}

}  // namespace tbtune
