#pragma once
/// \file bench.hpp
/// Bandwidth and latency measurements between GPUs (and host), on nvbandwidth's method:
/// each timed batch is held behind a spin kernel so enqueueing stays out of the time, timed
/// with events, warmed up, sampled several times and reported as median, min and max, with
/// each figure also as a share of the link's theoretical rate from the snapshot.
/// Threads: the pure functions and the testcase list may be used from any thread; a testcase's
/// run() drives the GPUs and is called from one thread at a time (it times with the devices to
/// itself). Results are plain values owned by the caller.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpupeer/snapshot.hpp"
#include "gpupeer/status.hpp"
#include "gpupeer/transfer.hpp"

namespace gpupeer {

/// Median, min and max of samples. Empty input gives zeros.
struct Stats {
  double median = 0, min = 0, max = 0;  ///< of the samples, in the caller's unit
  int samples = 0;                      ///< 0: nothing was measured
};
/// The median, min and max of `values` (taken by value: it is sorted). Pure.
Stats summarize(std::vector<double> values);

/// GB/s of transfers of `bytesEach` that started together and took `seconds` each: all the
/// bytes over the time until the last one ended (0 when there is none or a time is not
/// positive). The sum of each transfer's own rate overstates this when the transfers share an
/// engine or a port and partly run one after another.
double togetherGbps(std::size_t bytesEach, const std::vector<double>& seconds);

/// "512M", "1G", "4096", "8K", "2MiB" -> bytes. Errors name the text.
Result<std::size_t> parseByteSize(const std::string& text);
/// nccl-tests sizes: begin, begin*factor, ... up to and including end.
Result<std::vector<std::size_t>> sweepSizes(std::size_t begin, std::size_t end, double factor);
/// "512 MiB", "8 KiB", "100 B".
std::string formatBytes(std::size_t bytes);

/// What a testcase measures: GB/s (higher is better) or microseconds (lower is better).
enum class BenchKind { kBandwidth, kLatency };

/// One measured cell of a testcase.
struct BenchCell {
  int row = -1, col = -1;      ///< row: source / driver GPU (-1 for host); col: destination
  std::string label;           ///< "GPU0->GPU1", "host->GPU0", "GPU0 total"
  Stats value;                 ///< GB/s for bandwidth, microseconds for latency
  double theoreticalGBps = 0;  ///< 0 when unknown or not applicable
  bool verified = false;       ///< data checked after timing
  std::size_t bytes = 0;       ///< bytes per transfer (bandwidth cells)
  std::string note;            ///< "waived: ...", "FAIL: ...", flags
};

/// Everything one testcase (or one sweep) measured; a plain value owned by the caller.
struct BenchResult {
  std::string key;                         ///< the testcase's key ("ce_write"), or "<key>_<path>_sweep"
  std::string description;                 ///< the testcase's description
  BenchKind kind = BenchKind::kBandwidth;  ///< the unit of the cells
  std::vector<BenchCell> cells;            ///< one per pair (matrix) or per size (sweep)
  std::string waived;                      ///< non-empty when the testcase could not run here, with why
  std::string error;                       ///< non-empty when it failed
  /// Read back from a results file: the host and GPUs it names ("vm", "2x NVIDIA H200"; see
  /// benchGpusLabel). Empty for a result measured in this process.
  std::string host, gpus;
  double sum() const;  ///< sum of cell medians (the "SUM" line)
};

/// "2x NVIDIA H200": the GPUs of `s` as a bench JSON line names them ("" without a GPU).
std::string benchGpusLabel(const Snapshot& s);

/// How to measure; the defaults are nvbandwidth's.
struct BenchOptions {
  std::size_t bytes = 512u << 20;            ///< per copy; nvbandwidth's default
  int samples = 3;                           ///< timed samples; median reported
  int copiesPerSample = 8;                   ///< copies in each timed batch
  int warmups = 1;                           ///< untimed batches before the samples
  bool verify = true;                        ///< check the data after timing (a wrong byte makes the cell FAIL)
  int smBlocksPerSm = 2;                     ///< grid of the vector SM copy kernel
  bool smBulk = false;                       ///< SM copies by Hopper bulk copies instead of 16-byte vectors
  std::vector<int> devices;                  ///< empty: all
  int latencyHops = 20000;                   ///< pointer-chase loads / ping-pong round trips
  Path path = Path::kAuto;                   ///< the transfer engine's path for the `copy` testcase
  std::size_t stagingChunkBytes = 8u << 20;  ///< the staged pipeline's chunk
};

/// A testcase: a key users type, a description, and a run function that may waive itself.
struct BenchTestcase {
  std::string key;          ///< what users type after -t ("ce_write")
  std::string description;  ///< one line for --list
  BenchKind kind;           ///< bandwidth or latency
  /// Measures on the snapshot's GPUs; waives itself (BenchResult::waived) where it cannot run.
  BenchResult (*run)(const Snapshot&, const BenchOptions&);
};
/// Every testcase, in the order `gpupeer bench` runs them. Static data; any thread.
const std::vector<BenchTestcase>& benchTestcases();
/// The testcase with this key, or nullptr. The pointer is into static data.
const BenchTestcase* findBenchTestcase(const std::string& key);

/// Share of `theoreticalGBps` below which a figure is marked low.
inline constexpr double kBenchLowShare = 0.70;

/// OK when the sweep measures testcase `key` (ce_read, ce_write, sm_read, sm_write, sm_copy,
/// copy, staged, ce_no_p2p); else kInvalidArgument naming it and those. Needs no GPU.
Status checkSweepTestcase(const std::string& key);

/// Measures one pair with one testcase at several sizes (the sweep). Cells are one per size,
/// labelled by size; `row`/`col` hold src/dst.
BenchResult runSweep(const Snapshot& s, const BenchOptions& o, const std::string& key, int src, int dst,
                     const std::vector<std::size_t>& sizes);

/// A matrix testcase as text: a src x dst table of medians with % of the link, then notes.
std::string renderBenchText(const BenchResult& r, int gpuCount);
/// A sweep as text: one row per size.
std::string renderSweepText(const BenchResult& r);
/// Several sweeps of one pair (e.g. one per path) in one table, a column each.
std::string renderSweepsSideBySide(const std::vector<BenchResult>& sweeps);
/// One JSON object and a newline (`bench --json`): testcase, unit, date, host, GPUs, driver and
/// per cell label, src, dst, bytes, median, min, max, samples, verified, percentOfLink, note.
std::string benchToJsonLine(const BenchResult& r, const Snapshot& s);
/// CSV rows of the cells, with the column header first when `header`.
std::string benchToCsv(const BenchResult& r, bool header);

}  // namespace gpupeer
