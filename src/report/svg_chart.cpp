// Line charts as inline SVG: a log2 size axis (the sizes of a sweep double), a linear or log10
// value axis, and a legend. Every label passes through htmlEscape.
#include "report/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpupeer/bench.hpp"
#include "gpupeer/report.hpp"

namespace gpupeer::report {
namespace {

constexpr double kWidth = 620, kHeight = 320;
constexpr double kLeft = 64, kRight = 150, kTop = 30, kBottom = 44;  // room for ticks and legend
// Most ticks on an axis, whatever its range: values from a results file (1.7e308, 5e-324) must
// not make a tick loop run long or never end.
constexpr int kMaxTicks = 16;
// Least distance between two size labels: the widest ("512 MiB", "16 KiB") is ~42 px at 10 px.
constexpr double kMinTickGap = 60;

// Round numbers for a linear axis: 1, 2 or 5 times a power of ten, about five ticks.
double niceStep(double span) {
  double raw = span / 5, power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * power) return m * power;
  return 10 * power;
}

std::string number(double v) {
  if (v == 0) return "0";
  if (std::fabs(v) >= 1e6) return fmt::format("{:.3g}", v);
  if (std::fabs(v) >= 100) return fmt::format("{:.0f}", v);
  if (std::fabs(v) >= 1) return fmt::format("{:.3g}", v);
  return fmt::format("{:.2g}", v);
}

}  // namespace

const char* seriesColour(std::size_t i) {
  static const char* kPalette[] = {"#1f5fa8", "#d9822b", "#2e8b57", "#a83279", "#6b6b6b", "#8c6d1f"};
  return kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

std::string renderLineChart(const ChartSpec& spec) {
  double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
  for (const ChartSeries& s : spec.series)
    for (auto [x, y] : s.points) {
      if (x <= 0 || (spec.logY && y <= 0)) continue;
      xmin = std::min(xmin, x), xmax = std::max(xmax, x);
      ymin = std::min(ymin, y), ymax = std::max(ymax, y);
    }
  if (xmax <= 0) return "";
  const double lx0 = std::log2(xmin), lx1 = std::max(std::log2(xmax), lx0 + 1);
  double y0, y1;
  if (spec.logY) {
    y0 = std::floor(std::log10(ymin)), y1 = std::max(std::ceil(std::log10(ymax)), y0 + 1);
  } else {
    // The headroom must not overflow to infinity at the top of the double range.
    y0 = 0, y1 = ymax > 0 ? std::min(ymax * 1.08, std::numeric_limits<double>::max()) : 1;
  }
  const double plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (std::log2(x) - lx0) / (lx1 - lx0) * plotW; };
  auto py = [&](double y) {
    double t = spec.logY ? (std::log10(y) - y0) / (y1 - y0) : (y - y0) / (y1 - y0);
    return kTop + (1 - t) * plotH;
  };

  std::string svg = fmt::format(
      "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" "
      "role=\"img\"><title>{}</title>\n",
      kWidth, kHeight, kWidth, kHeight, htmlEscape(spec.title));
  svg += fmt::format("<text class=\"chart-title\" x=\"{}\" y=\"18\">{}</text>\n", kLeft, htmlEscape(spec.title));
  // Size ticks at most every kMinTickGap pixels, so that labels as wide as "512 MiB" never touch:
  // every doubling on a short axis, every 2nd, 3rd, ... doubling on a longer one.
  const double fitting = std::max(1.0, std::floor(plotW / kMinTickGap));
  const double xStride = std::max(1.0, std::ceil((lx1 - lx0) / fitting));
  for (int k = 0; k <= kMaxTicks; ++k) {
    double l = std::ceil(lx0 / xStride) * xStride + k * xStride;
    if (l > lx1 + 1e-9 || l > 62) break;  // 2^62 bytes: past it no size_t holds the label
    double x = kLeft + (l - lx0) / (lx1 - lx0) * plotW;
    svg += fmt::format("<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>", x, kTop,
                       kTop + plotH);
    svg += fmt::format("<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x,
                       kTop + plotH + 14, htmlEscape(formatBytes(static_cast<std::size_t>(std::exp2(l)))));
  }
  std::vector<double> yticks;
  if (spec.logY) {
    const double decades = std::max(1.0, std::ceil((y1 - y0) / kMaxTicks));
    for (int k = 0; k <= kMaxTicks && y0 + k * decades <= y1 + 1e-9; ++k)
      yticks.push_back(std::pow(10.0, y0 + k * decades));
  } else {
    // A span near the smallest double has no round step (it comes out 0): the ends alone then.
    const double step = niceStep(y1 - y0);
    if (!(step > 0) || !std::isfinite(step)) {
      yticks = {0, y1};
    } else {
      for (int k = 0; k <= kMaxTicks && k * step <= y1 * (1 + 1e-9); ++k) yticks.push_back(k * step);
    }
  }
  for (double v : yticks) {
    double y = py(v);
    svg += fmt::format("<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>", kLeft, y,
                       kLeft + plotW);
    svg += fmt::format("<text class=\"tick\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, y + 4,
                       number(v));
  }
  svg +=
      fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n", kLeft, kTop, plotW, plotH);
  svg += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">message size</text>",
                     kLeft + plotW / 2, kHeight - 8);
  svg +=
      fmt::format("<text class=\"axis\" transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                  kTop + plotH / 2, htmlEscape(spec.yLabel));

  for (std::size_t i = 0; i < spec.series.size(); ++i) {
    const ChartSeries& s = spec.series[i];
    std::string points, dots;
    for (auto [x, y] : s.points) {
      if (x <= 0 || (spec.logY && y <= 0)) continue;
      points += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
      dots += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"><title>{}: {} {}</title></circle>",
                          px(x), py(y), seriesColour(i), htmlEscape(s.name),
                          htmlEscape(formatBytes(static_cast<std::size_t>(x))), number(y));
    }
    svg += fmt::format("<polyline class=\"series\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{} points=\"{}\"/>",
                       seriesColour(i), s.dashed ? " stroke-dasharray=\"6 4\"" : "", points);
    svg += dots + "\n";
    double ly = kTop + 8 + 18 * static_cast<double>(i);
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>"
        "<text class=\"legend\" x=\"{5}\" y=\"{6:.1f}\">{7}</text>\n",
        kLeft + plotW + 10, ly, kLeft + plotW + 34, seriesColour(i), s.dashed ? " stroke-dasharray=\"6 4\"" : "",
        kLeft + plotW + 40, ly + 4, htmlEscape(s.name));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace gpupeer::report
