#pragma once
// The signals of RankSignals in memory (ranks in several processes): one thread on the rank's
// own stream raises flags in its peers' memory and waits for flags that they raise in this
// rank's memory, within the rank's bound; where a wait gives up (a dead or stuck peer, an
// abort) the error word says why, and every later wait of the rank gives up at once. Internal
// to the library.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

struct AwaitSignalsArgs {
  /// Raised first, in order (release stores: a word raised after another is seen after it):
  /// peers' flags and their values.
  std::uint32_t* postWords[2 * kMaxCommRanks] = {};
  std::uint32_t postValues[2 * kMaxCommRanks] = {};
  int posts = 0;
  /// The flags awaited, in this rank's memory, and the rank that raises each.
  std::uint32_t* words[kMaxCommRanks] = {};
  int senders[kMaxCommRanks] = {};
  int count = 0;
  /// Non-zero: each awaited flag carries word0 of its sender's call and the word `word1At` words
  /// further carries word1 (ranks/call_signature.hpp); a call other than this one is reported
  /// as kMismatchError | sender with both calls beside the error word, as the kernels' call
  /// lines report one (collectives/call_line.cuh).
  std::uint32_t call[2] = {};
  int word1At = 0;
  /// The rank's error word, bound and abort word (cuda/signal_device.cuh: waitGivesUp).
  std::uint32_t* error = nullptr;
  unsigned long long timeoutNs = 0;
  const volatile std::uint32_t* abortWord = nullptr;
};

/// Enqueues on `stream` (current device): raise the posted flags, then wait until each awaited
/// flag is raised (non-zero), check the call where `call` is set, and set the flags back to 0.
cudaError_t launchAwaitSignals(const AwaitSignalsArgs& a, cudaStream_t stream);

}  // namespace gpupeer
