#pragma once
// Which calls libgpupeer_nccl.so runs on gpupeer. The answer depends only on the call (operation,
// size, rank count) and the environment, never on a rank's own state, so every rank of a
// communicator routes a call alike and no rank waits in gpupeer for a peer that went to NCCL.

#include <cstddef>
#include <vector>

#include "gpupeer/collective_types.hpp"

namespace gpupeer::nccl_api {

/// GPUPEER_NCCL_ROUTE: "table" (the default: gpupeer where the kept measurements say it is
/// faster), "nccl" (every call to NCCL, no gpupeer communicator is started) or "gpupeer" (every
/// call gpupeer can run, to measure the table). Read once; anything else is "nccl" with a warning.
enum class RouteMode { kTable, kGpupeer, kNccl };
RouteMode routeMode();
const char* routeModeName(RouteMode mode);

/// How a communicator's ranks are run, which the measurements are kept apart by.
enum class CallShape {
  kProcessPerRank,  ///< one process per rank, every rank on one host
  kOneProcess,      ///< one process drives every rank (nccl-tests' -g N, a group of every rank's call)
  kAcrossHosts,     ///< ranks on several hosts, several on each: an all-reduce in parts (gpupeer_call.hpp)
};

/// One operation on one rank count in one shape: the sizes measured with both and where gpupeer
/// was faster.
struct MeasuredPoint {
  std::size_t bytes;
  bool gpupeerFaster;
};
struct MeasuredCurve {
  CollOp op;
  int ranks;
  CallShape shape;
  std::vector<MeasuredPoint> points;  ///< by size
};

/// The kept measurements (route_table_data.inc, written by scripts/nccl_route_table.py).
const std::vector<MeasuredCurve>& keptMeasurements();

/// Whether `curves` say gpupeer is faster for `op` of `bytes` (nccl-tests' size) on `ranks`
/// ranks in that shape: at the nearest measured sizes on both sides (below the smallest measured
/// size, the smallest's answer; above the largest, NCCL; a rank count or shape never measured,
/// NCCL).
bool measuredFasterIn(const std::vector<MeasuredCurve>& curves, CollOp op, std::size_t bytes, int ranks,
                      CallShape shape);

/// measuredFasterIn the kept measurements.
bool measuredFaster(CollOp op, std::size_t bytes, int ranks, CallShape shape);

}  // namespace gpupeer::nccl_api
