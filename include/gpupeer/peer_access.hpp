#pragma once
/// \file peer_access.hpp
/// Peer access is process state in CUDA: enabled once per ordered pair and remembered.

#include <mutex>
#include <set>
#include <utility>

#include "gpupeer/status.hpp"

namespace gpupeer {

/// Tracks which (accessor, owner) pairs have peer access. Thread-safe.
class PeerAccess {
 public:
  /// Lets `accessor` load and store `owner`'s memory (cudaDeviceEnablePeerAccess called on
  /// accessor). "Already enabled" (by us or by another library) is success. Unsupported pairs
  /// return kUnsupported with cudaErrorPeerAccessUnsupported and its KB id.
  Status enable(int accessor, int owner);
  /// Whether enable(accessor, owner) has succeeded in this process.
  bool isEnabled(int accessor, int owner) const;

  /// The process-wide instance (CUDA's peer state is per process too).
  static PeerAccess& process();

 private:
  mutable std::mutex mutex_;
  std::set<std::pair<int, int>> enabled_;
};

}  // namespace gpupeer
