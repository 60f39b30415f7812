#include "nccl_api/route_table.hpp"

#include <strings.h>

#include <cstdlib>
#include <vector>

#include "nccl_api/debug_log.hpp"

namespace gpupeer::nccl_api {
const std::vector<MeasuredCurve>& keptMeasurements() {
  static const std::vector<MeasuredCurve> table = {
#include "nccl_api/route_table_data.inc"
  };
  return table;
}

// The table unless asked otherwise: a library that is preloaded to speed calls up does so without
// a second switch, and it takes only calls measured faster (route_sources.json).
RouteMode routeMode() {
  static const RouteMode mode = [] {
    const char* text = std::getenv("GPUPEER_NCCL_ROUTE");
    if (text == nullptr || *text == '\0' || strcasecmp(text, "table") == 0) return RouteMode::kTable;
    if (strcasecmp(text, "nccl") == 0) return RouteMode::kNccl;
    if (strcasecmp(text, "gpupeer") == 0) return RouteMode::kGpupeer;
    logWarn("GPUPEER_NCCL_ROUTE={} is not table, gpupeer or nccl: every call goes to NCCL", text);
    return RouteMode::kNccl;
  }();
  return mode;
}

const char* routeModeName(RouteMode mode) {
  switch (mode) {
    case RouteMode::kGpupeer: return "gpupeer";
    case RouteMode::kNccl: return "nccl";
    case RouteMode::kTable: break;
  }
  return "table";
}

bool measuredFasterIn(const std::vector<MeasuredCurve>& curves, CollOp op, std::size_t bytes, int ranks,
                      CallShape shape) {
  for (const MeasuredCurve& curve : curves) {
    if (curve.op != op || curve.ranks != ranks || curve.shape != shape || curve.points.empty()) continue;
    const std::vector<MeasuredPoint>& p = curve.points;
    if (bytes <= p.front().bytes) return p.front().gpupeerFaster;
    for (std::size_t i = 1; i < p.size(); ++i) {
      if (bytes == p[i].bytes) return p[i].gpupeerFaster;
      if (bytes < p[i].bytes) return p[i - 1].gpupeerFaster && p[i].gpupeerFaster;
    }
    return false;  // larger than anything measured
  }
  return false;
}

bool measuredFaster(CollOp op, std::size_t bytes, int ranks, CallShape shape) {
  return measuredFasterIn(keptMeasurements(), op, bytes, ranks, shape);
}

}  // namespace gpupeer::nccl_api
