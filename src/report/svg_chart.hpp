#pragma once
// Line charts of a figure against message size, drawn as inline SVG (log2 size axis).

#include <string>
#include <utility>
#include <vector>

namespace gpupeer::report {

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  ///< (bytes, value); non-positive bytes are dropped
  bool dashed = false;                            ///< baselines are dashed, gpupeer solid
};

struct ChartSpec {
  std::string title;   ///< escaped by the renderer
  std::string yLabel;  ///< "time (us)", "busbw (GB/s)"
  bool logY = false;   ///< times span decades; bandwidths read better on a linear axis
  std::vector<ChartSeries> series;
};

/// An <svg class="chart"> with axes, ticks, one polyline per series (class "series"), a dot per
/// point with a <title> tooltip, and a legend. Empty string when no series has a point.
std::string renderLineChart(const ChartSpec& spec);

/// Colour of the i-th series (a fixed palette that reads on white and in greyscale print).
const char* seriesColour(std::size_t i);

}  // namespace gpupeer::report
