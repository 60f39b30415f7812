#pragma once
// Ordering between ranks' streams for the copy-engine algorithm and the ring, one of two ways.
// In one process: an event recorded on the sending stream and awaited on the receiving one
// (~10 us per crossing between GPUs on 2x H200). Flags written and awaited by the streams
// (cuStreamWriteValue32/WaitValue32) and a one-block kernel per rank meeting its peers through
// flags in P2P memory both measured slower there.
// Across processes an event cannot order two processes' streams (a wait binds to the last
// record the waiting host has seen), so the ranks use flags in each receiver's memory, which
// its peers map. A rank's own stream raises and awaits them in one-thread kernels
// (exchange: raise, then wait within the rank's bound, and set the awaited flags back to 0 so
// that the same values serve every replay of a CUDA graph); that a side stream's copies landed
// is raised by a 4-byte copy that starts once they completed (on a stream of its own, after an
// event). Side streams never wait for a peer. The driver's stream memory operations were
// slower here (a 256 MiB all-reduce of 2 ranks in graphs: 1,486 us with cuStreamWaitValue32
// waits on the side stream and cuStreamWriteValue32 posts, 1,095 with those posts alone, 1,027
// as it is, against 855 by the one-shot kernel), and a driver wait has no bound: where two
// streams share a hardware queue, a wait that never ends also stops the kernel behind it that
// would have reported a dead peer.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "cuda/device_memory.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// What a bounded wait gives up on: the rank's error word, its bound and its abort word.
struct SignalBound {
  std::uint32_t* error = nullptr;
  unsigned long long timeoutNs = 0;
  const volatile std::uint32_t* abortWord = nullptr;
};

class RankSignals {
 public:
  /// One process: `flagsPerSender` distinct signals from each rank to each other rank, as events.
  Status create(const std::vector<int>& devices, int flagsPerSender);
  /// Ranks in several processes, this one `rank` on `device`: words[r] is rank r's flag memory
  /// as this process reaches it (kRankSignalWords words, [sender][flag], zeroed).
  Status createInMemory(int rank, int device, const std::vector<std::uint32_t*>& words, int flagsPerSender,
                        const SignalBound& bound);

  /// Enqueues on `stream` (of rank `from`): signal `flag` to rank `to`.
  Status post(int from, cudaStream_t stream, int to, int flag);
  /// Enqueues on `stream` (of rank `at`): wait until rank `from` has posted `flag` to `at`. One
  /// process only (events); across processes every wait is bounded (exchange).
  Status wait(int at, cudaStream_t stream, int from, int flag);
  /// Enqueues on `stream` (rank `at`'s own): post every signal of `posts` (a rank, a flag, and
  /// across processes the value it takes), then wait for every signal of `waits` (a rank and a
  /// flag it posts to `at`) within the bound; where a wait gives up, the rank's error word says
  /// why and every later wait of the rank gives up at once. With `call` (across processes),
  /// each peer posted word0 of its call as the awaited flag and word1 as `word1Flag` before it:
  /// a different call is reported (kMismatchError) instead of awaited.
  struct Posted {
    int to = 0, flag = 0;
    std::uint32_t value = 1;
  };
  struct Awaited {
    int from = 0, flag = 0;
  };
  struct ExpectedCall {
    std::uint32_t word0 = 0, word1 = 0;
    int word1Flag = 0;
  };
  Status exchange(int at, cudaStream_t stream, const std::vector<Posted>& posts, const std::vector<Awaited>& waits,
                  const ExpectedCall* call = nullptr);
  /// Whether the signals are flags in memory (ranks in several processes).
  bool inMemory() const { return !words_.empty(); }

 private:
  std::uint32_t* word(int at, int from, int flag) const { return words_[at] + from * flagsPerSender_ + flag; }

  std::vector<int> devices_;
  std::vector<std::vector<Event>> events_;  // one process: per rank, [flag] events it records
  // Across processes: every rank's flag memory, [sender][flag] words, and this rank's bound.
  std::vector<std::uint32_t*> words_;
  int flagsPerSender_ = 0;
  DeviceBuffer one_;  // the value a side stream's copy raises a flag to
  SignalBound bound_;
};

}  // namespace gpupeer
