#pragma once
/// \file transfer.hpp
/// Stream-ordered copies between any two devices (and host <-> device) that pick their path
/// per pair: P2P by copy engine, P2P by SM kernel, or a host-staged pipeline where P2P is
/// unavailable or disabled; batches of small copies issued as one kernel.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "gpupeer/cuda_stream.hpp"
#include "gpupeer/snapshot.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// How a copy travels.
enum class Path {
  kAuto,        ///< the engine decides (see choosePath)
  kCopyEngine,  ///< cudaMemcpyPeerAsync / cudaMemcpyAsync with peer access enabled
  kKernel,      ///< SM loads and stores through peer memory
  kStaged,      ///< device -> pinned host buffers -> device, chunked and overlapped
};
const char* pathName(Path p);  ///< "auto", "copy-engine", "kernel", "staged"
/// Parses "auto", "ce", "copy-engine", "kernel", "staged"; kInvalidArgument otherwise.
Result<Path> parsePath(const std::string& text);

/// Where a pointer lives: a CUDA device ordinal, or kHost for host memory.
inline constexpr int kHost = -1;

/// One copy of `bytes` from (src, srcDevice) to (dst, dstDevice).
/// Pointers are the caller's and must stay valid until the copy has run on the stream.
struct CopyRequest {
  void* dst = nullptr;        ///< destination, device memory of dstDevice or host memory
  int dstDevice = 0;          ///< CUDA ordinal or kHost
  const void* src = nullptr;  ///< source, device memory of srcDevice or host memory
  int srcDevice = 0;          ///< CUDA ordinal or kHost
  std::size_t bytes = 0;      ///< 0 is a no-op
};

/// The path a copy takes and why, in words.
struct PathChoice {
  Path path = Path::kCopyEngine;  ///< never kAuto
  std::string reason;             ///< "P2P over NV18", "GPUPEER_P2P_DISABLE=1", ...
};

/// Chooses the path for src -> dst (kHost allowed) from the snapshot's P2P facts and the
/// environment it recorded: GPUPEER_P2P_DISABLE=1 or NCCL_P2P_DISABLE=1 force staging between
/// GPUs. A forced `requested` path is honoured when it can work (a kernel or copy-engine P2P
/// path needs peer access; staging needs two different GPUs); otherwise kInvalidArgument or
/// kUnsupported says why.
Result<PathChoice> choosePath(const Snapshot& s, int srcDevice, int dstDevice, Path requested);

/// Checks a request before anything is enqueued: device ordinals in range, non-null pointers
/// for non-empty copies, and on one device no overlap between source and destination ranges.
Status validateCopyRequest(const CopyRequest& r, int deviceCount);

/// The staged pipeline's buffers and the pointer check.
struct TransferOptions {
  std::size_t stagingChunkBytes = 8u << 20;  ///< per pinned buffer
  int stagingBuffers = 3;                    ///< per ordered pair; the pipeline's depth
  bool checkPointers = true;                 ///< ask CUDA which device each pointer belongs to (cheap, not in graphs)
};

/// Copies between the GPUs of a snapshot. Owns streams, events and pinned staging memory,
/// created on first use per pair and reused. Thread-safe (calls are serialised); copies on one
/// caller stream are ordered like any stream work, and capturable in a CUDA graph.
class TransferEngine {
 public:
  /// An engine for the GPUs of `s` (copied; the snapshot decides each pair's path). Allocates
  /// nothing until the first copy.
  static Result<std::unique_ptr<TransferEngine>> create(const Snapshot& s, TransferOptions options = {});
  /// Frees streams, events and staging memory; copies still in flight must be waited for first.
  ~TransferEngine();

  /// Enqueues one copy after the work already on `stream` (work enqueued on it later starts
  /// after the copy). As for a kernel launch, `stream` belongs to the current device (CUDA
  /// cannot say which device a stream has while it is captured); the current device is the
  /// same on return. `taken` receives the path and the reason.
  Status copy(const CopyRequest& r, cudaStream_t stream, Path path = Path::kAuto, PathChoice* taken = nullptr);

  /// Enqueues many copies as one operation: one kernel per source GPU where P2P allows, the
  /// single-copy paths otherwise. Ordered after `stream` like copy().
  Status copyBatch(const std::vector<CopyRequest>& requests, cudaStream_t stream, PathChoice* taken = nullptr);

  /// The snapshot the engine decides from (its own copy, alive as long as the engine).
  const Snapshot& snapshot() const;

 private:
  struct Impl;
  explicit TransferEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpupeer
