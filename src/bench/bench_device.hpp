#pragma once
// Device-side building blocks of the bench testcases.

#include <vector>

#include "gpupeer/bench.hpp"

namespace gpupeer::bench {

enum class Engine {
  kCopyEngine,
  kSm,          ///< one GPU's SMs move the data (the driver's)
  kSmPushPull,  ///< both GPUs' SMs: the source pushes the first half, the destination pulls the rest
  kTransfer,    ///< gpupeer's TransferEngine on the path in TransferSetup::path
};
/// Which GPU issues the transfer: the source pushes (write) or the destination pulls (read).
enum class Driver { kSource, kDestination };

struct Transfer {
  int src, dst;  ///< -1 is pinned host memory
};

struct TransferSetup {
  Engine engine = Engine::kCopyEngine;
  Driver driver = Driver::kSource;
  bool peerAccess = true;   ///< false: peer access is disabled for the pairs while measuring
  Path path = Path::kAuto;  ///< for Engine::kTransfer
};

/// Measures `transfers` running at the same time, each timed on its own lane. One cell per
/// transfer (GB/s), verified afterwards when options ask for it. `together`, when given, gets
/// per sample the bytes of all transfers over the time until the last one ended (GB/s): the
/// rate they reach together, which the sum of their own rates overstates when the engines
/// take the transfers partly one after another.
Result<std::vector<BenchCell>> measureTransfers(const Snapshot& s, const BenchOptions& o, const TransferSetup& setup,
                                                const std::vector<Transfer>& transfers, std::size_t bytes,
                                                std::vector<double>* together = nullptr);

/// Latency of dependent loads by GPU `reader` from `owner`'s memory, microseconds per load.
Result<Stats> measurePointerChase(const BenchOptions& o, int reader, int owner);
/// One-way time of a flag ping-pong between two GPUs, microseconds.
Result<Stats> measurePingPong(const BenchOptions& o, int a, int b);
/// Time of one small (4-byte) copy-engine copy from src to dst, issued back to back.
Result<Stats> measureSmallCopy(const BenchOptions& o, int src, int dst);

/// Time of `copies` scattered small copies from src to dst, issued as a loop of
/// cudaMemcpyPeerAsync (first cell) and as one TransferEngine::copyBatch (second), in us.
Result<std::vector<BenchCell>> measureBatch(const Snapshot& s, const BenchOptions& o, int src, int dst, int copies,
                                            std::size_t piece);

/// Devices the options select (all GPUs of the snapshot when none given).
std::vector<int> selectedDevices(const Snapshot& s, const BenchOptions& o);

}  // namespace gpupeer::bench
