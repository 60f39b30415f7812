#pragma once
// What libgpupeer_nccl.so keeps per NCCL communicator: the gpupeer communicator beside it, when
// its ranks share one host and P2P (or, across hosts, beside this host's part of it), and how it
// was started. Looked up by the real NCCL communicator, which is the handle the program holds
// (so every call NCCL takes gets the program's arguments unchanged).

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "gpupeer/communicator.hpp"
#include "gpupeer/rank_communicator.hpp"

namespace gpupeer::nccl_api {

struct CommState {
  ncclComm_t real = nullptr;
  int rank = 0;
  int ranks = 0;
  int device = -1;
  /// Null where every call of this communicator goes to NCCL (unless oneProcess); `why` says why.
  std::unique_ptr<RankCommunicator> gpupeer;
  /// Where this process drives every rank of the communicator (ncclCommInitAll; a group of
  /// ncclCommInitRank with one unique id and every rank): gpupeer's one-process communicator
  /// over their GPUs in rank order, shared by all of them, which takes a group's calls of all
  /// ranks as one (one_process_calls.hpp). gpupeer is then null.
  std::shared_ptr<Communicator> oneProcess;
  /// Where the ranks run on several hosts, as many on each and several: the communicator in the
  /// parts an all-reduce runs in (runCall, gpupeer_call.hpp). gpupeer and oneProcess are null.
  struct AcrossHosts {
    /// This host's ranks: NCCL's split of the communicator, and its state with gpupeer beside it.
    ncclComm_t insideComm = nullptr;
    std::shared_ptr<CommState> inside;
    /// NCCL's split of the ranks at this rank's place on every host, one per host.
    ncclComm_t across = nullptr;
  };
  std::unique_ptr<AcrossHosts> acrossHosts;
  /// Which communicator the rank belongs to, where known at its making: the unique id of
  /// ncclCommInitRank, one key per ncclCommInitAll; empty for ncclCommSplit's.
  std::string clique;
  std::string why;
  /// The exchanges (start-up, registration) run as NCCL all-gathers on this stream.
  cudaStream_t exchangeStream = nullptr;
  /// Started together with other ranks of this process but not with all of its communicator's
  /// (several processes of several GPUs each): each rank is then a RankCommunicator driven from
  /// a thread that drives other GPUs too, a shape measured slower on gpupeer than on NCCL, so the
  /// route table leaves its calls to NCCL.
  bool sharesProcess = false;
  /// ncclCommGetAsyncError's reading of gpupeer's errors: when it last read, and what (kept
  /// once failed: the kernels' error word stays set).
  std::atomic<std::int64_t> lastPollNs{0};
  std::atomic<int> gpupeerError{0};
  ~CommState();
};

/// Ends the parts of a communicator across hosts: gpupeer's among the host's ranks (whose work
/// the caller waited for or aborted), then NCCL's two splits, destroyed or aborted.
void endSplits(CommState::AcrossHosts& parts, bool abort);

/// Adds `state` under state->real, replacing what was there. Any thread.
void addComm(std::shared_ptr<CommState> state);
/// The state of `comm`, or null for a communicator this library did not make. Any thread.
std::shared_ptr<CommState> findComm(ncclComm_t comm);
/// Takes `comm`'s state out; null if none.
std::shared_ptr<CommState> removeComm(ncclComm_t comm);

}  // namespace gpupeer::nccl_api
