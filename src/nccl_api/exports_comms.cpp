// Communicators: each is NCCL's, made by the real NCCL with the program's arguments; beside it
// gpupeer's is started where it can be (comm_start.hpp), and ended with it.

#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cuda/device_guard.hpp"
#include "nccl_api/comm_start.hpp"
#include "nccl_api/debug_log.hpp"
#include "nccl_api/gpupeer_call.hpp"
#include "nccl_api/group_calls.hpp"
#include "nccl_api/real_nccl.hpp"
#include "nccl_api/route_table.hpp"

namespace gn = gpupeer::nccl_api;

namespace {

// The communicator a rank made by ncclCommInitRank belongs to: its unique id.
std::string cliqueOf(const ncclUniqueId& id) { return std::string(id.internal, sizeof id.internal); }

// After NCCL made `comm` (result r): start gpupeer beside it now, or at the group's end.
ncclResult_t afterInit(ncclResult_t r, ncclComm_t comm, const ncclConfig_t* config, std::string clique = {}) {
  if (r != ncclSuccess || comm == nullptr) return r;
  if (!gn::blockingComm(config)) {
    gn::logInfo("comm {}: non-blocking: every call to NCCL", fmt::ptr(comm));
    return r;
  }
  if (gn::inGroup())
    gn::deferStart(gn::newState(comm, std::move(clique)));
  else
    gn::startAndAdd({gn::newState(comm, std::move(clique))});
  return r;
}

// Before NCCL makes the ranks one thread drives (ncclCommInitAll, ncclCommInitRank inside a
// group): NCCL's connections made at start-up rather than on first use. gpupeer then takes the
// eager calls, so NCCL's first call may come inside a capture (nccl-tests' -G captures a graph
// per stream, which gpupeer leaves to NCCL), where connecting peers is not permitted: on 2x
// H200 the library's first captured call failed with "failed to peer with device 1 ...
// operation not permitted when stream is capturing". NCCL reads the variable once, at its first
// communicator; a value the program set is kept.
void connectAtStart() {
  if (gn::routeMode() == gn::RouteMode::kNccl || std::getenv("NCCL_RUNTIME_CONNECT") != nullptr) return;
  setenv("NCCL_RUNTIME_CONNECT", "0", 0);
  gn::logInfo("NCCL_RUNTIME_CONNECT=0: one thread drives several ranks, whose first NCCL call may be captured");
}

// Waits for this rank's gpupeer work before its memory goes: NCCL's destroy also finishes the
// communicator's work first. A rank of a one-process set waits on an abort too: its kernels
// wait only for ranks whose kernels the same call launched, never for another process. The
// parts of a communicator across hosts end with it: gpupeer's among the host's ranks, then
// NCCL's two splits, destroyed or aborted as the communicator is.
void endGpupeer(const std::shared_ptr<gn::CommState>& state, bool abort) {
  if (state == nullptr) return;
  if (state->acrossHosts != nullptr) {
    endGpupeer(state->acrossHosts->inside, abort);
    gn::endSplits(*state->acrossHosts, abort);
    state->acrossHosts.reset();
    return;
  }
  if (state->gpupeer == nullptr && state->oneProcess == nullptr) return;
  if (abort && state->gpupeer != nullptr) {
    state->gpupeer->abort();
    return;
  }
  gpupeer::DeviceGuard guard;
  cudaSetDevice(state->device);
  cudaDeviceSynchronize();
}

std::mutex windowLock;
std::unordered_map<ncclWindow_t, void*> windowBuffers;  // windows gpupeer registered too

}  // namespace

extern "C" {

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclCommInitRank, comm, nranks, commId, rank);
  if (gn::inGroup()) connectAtStart();
  ncclResult_t r = gn::fromNccl(GPUPEER_REAL_NCCL(ncclCommInitRank, comm, nranks, commId, rank));
  return afterInit(r, r == ncclSuccess ? *comm : nullptr, nullptr, cliqueOf(commId));
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclCommInitRankConfig, comm, nranks, commId, rank, config);
  if (gn::inGroup()) connectAtStart();
  ncclResult_t r = gn::fromNccl(GPUPEER_REAL_NCCL(ncclCommInitRankConfig, comm, nranks, commId, rank, config));
  return afterInit(r, r == ncclSuccess ? *comm : nullptr, config, cliqueOf(commId));
}

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclCommInitAll, comm, ndev, devlist);
  if (ndev > 1) connectAtStart();
  ncclResult_t r = gn::fromNccl(GPUPEER_REAL_NCCL(ncclCommInitAll, comm, ndev, devlist));
  if (r != ncclSuccess || !gn::blockingComm(nullptr)) return r;
  std::vector<std::shared_ptr<gn::CommState>> states;
  const std::string clique = fmt::format("ncclCommInitAll {}", fmt::ptr(comm[0]));
  for (int i = 0; i < ndev; ++i)
    if (comm[i] != nullptr) states.push_back(gn::newState(comm[i], clique));
  if (gn::inGroup()) {
    for (auto& s : states) gn::deferStart(std::move(s));
  } else {
    gn::startAndAdd(std::move(states));
  }
  return r;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclCommSplit, comm, color, key, newcomm, config);
  ncclResult_t r = gn::fromNccl(GPUPEER_REAL_NCCL(ncclCommSplit, comm, color, key, newcomm, config));
  // A rank with NCCL_SPLIT_NOCOLOR gets no communicator; the others start theirs together.
  return afterInit(r, r == ncclSuccess ? *newcomm : nullptr, config);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclCommDestroy, comm);
  std::shared_ptr<gn::CommState> state = gn::removeComm(comm);
  endGpupeer(state, false);
  state.reset();
  return gn::fromNccl(GPUPEER_REAL_NCCL(ncclCommDestroy, comm));
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclCommAbort, comm);
  std::shared_ptr<gn::CommState> state = gn::removeComm(comm);
  endGpupeer(state, true);
  state.reset();
  return gn::fromNccl(GPUPEER_REAL_NCCL(ncclCommAbort, comm));
}

// NCCL's error first; where NCCL has none, what gpupeer's kernels reported (a peer that did
// not arrive within the bound, a mismatched call), read without waiting for any stream. A rank
// of a one-process set reports what any rank of the set's Communicator recorded: their kernels
// wait for each other.
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclCommGetAsyncError, comm, asyncError);
  ncclResult_t r = gn::fromNccl(GPUPEER_REAL_NCCL(ncclCommGetAsyncError, comm, asyncError));
  if (r != ncclSuccess || asyncError == nullptr || *asyncError != ncclSuccess) return r;
  std::shared_ptr<gn::CommState> state = gn::findComm(comm);
  if (state != nullptr && state->acrossHosts != nullptr) {
    // NCCL's part across hosts first, then gpupeer's among the host's ranks, as for any rank.
    r = gn::fromNccl(GPUPEER_REAL_NCCL(ncclCommGetAsyncError, state->acrossHosts->across, asyncError));
    if (r != ncclSuccess || *asyncError != ncclSuccess) return r;
    state = state->acrossHosts->inside;
  }
  if (state == nullptr || (state->gpupeer == nullptr && state->oneProcess == nullptr)) return r;
  // Watchdogs poll this for every operation in flight; the kernels' word is read at most every
  // 50 ms per communicator (each reading is a copy and a wait on a stream of its own).
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  if (state->gpupeerError.load() == 0 && now - state->lastPollNs.load() >= 50'000'000) {
    state->lastPollNs.store(now);
    gpupeer::Status s = state->gpupeer != nullptr ? state->gpupeer->pollError() : state->oneProcess->pollBarriers();
    if (!s.isOk()) state->gpupeerError.store(gn::failedCall(s));
  }
  if (int e = state->gpupeerError.load(); e != 0) *asyncError = static_cast<ncclResult_t>(e);
  return r;
}

const char* ncclGetLastError(ncclComm_t comm) {
  const gn::RealNccl& real = gn::realNccl();
  if (const char* ours = gn::lastGpupeerError(); ours != nullptr && !gn::fromRealNccl(__builtin_return_address(0)))
    return ours;
  return real.ncclGetLastError != nullptr ? real.ncclGetLastError(comm) : "";
}

// Windows are registered by every rank together (NCCL's contract), as gpupeer's buffers must
// be: gpupeer registers the window's buffer too (cudaMalloc memory by CUDA IPC, ncclMemAlloc's
// cuMem memory by file descriptors), and its zero-copy kernels may then read it. A buffer no
// other process can map stays NCCL's alone. ncclCommRegister is not collective, so gpupeer does
// not register its buffers (a rank would wait for peers that never register).
ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclCommWindowRegister, comm, buff, size, win, winFlags);
  ncclResult_t r = gn::fromNccl(GPUPEER_REAL_NCCL(ncclCommWindowRegister, comm, buff, size, win, winFlags));
  std::shared_ptr<gn::CommState> state = gn::findComm(comm);
  if (r != ncclSuccess || state == nullptr || state->gpupeer == nullptr || gn::inGroup()) return r;
  gpupeer::Status s = state->gpupeer->registerBuffer(buff, size);
  if (!s.isOk()) {
    gn::logInfo("comm {}: window of {} bytes at {} is NCCL's alone: {}", fmt::ptr(comm), size, buff, s.toString());
    return r;
  }
  std::lock_guard guard(windowLock);
  windowBuffers[*win] = buff;
  return r;
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclCommWindowDeregister, comm, win);
  void* buffer = nullptr;
  {
    std::lock_guard guard(windowLock);
    if (auto it = windowBuffers.find(win); it != windowBuffers.end()) {
      buffer = it->second;
      windowBuffers.erase(it);
    }
  }
  std::shared_ptr<gn::CommState> state = gn::findComm(comm);
  if (buffer != nullptr && state != nullptr && state->gpupeer != nullptr) {
    gpupeer::Status s = state->gpupeer->deregisterBuffer(buffer);
    if (!s.isOk()) gn::failedCall(s);
  }
  return gn::fromNccl(GPUPEER_REAL_NCCL(ncclCommWindowDeregister, comm, win));
}

}  // extern "C"
