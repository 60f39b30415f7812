#include "nccl_api/group_calls.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "nccl_api/comm_start.hpp"
#include "nccl_api/debug_log.hpp"
#include "nccl_api/one_process_calls.hpp"
#include "nccl_api/real_nccl.hpp"

namespace gpupeer::nccl_api {
namespace {

struct GroupState {
  int depth = 0;
  std::vector<GpupeerCall> calls;
  std::vector<std::shared_ptr<CommState>> toStart;
};
thread_local GroupState group;

// Whether one gpupeer call can take these streams: none is capturing, or all are in one capture.
// nccl-tests' -G captures each rank's stream into a graph of its own, and a call that orders
// one rank's stream after another's cannot span those.
bool oneCaptureOrNone(const std::vector<cudaStream_t>& streams, std::string& why) {
  unsigned long long first = 0;
  for (std::size_t r = 0; r < streams.size(); ++r) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    if (cudaStreamGetCaptureInfo(streams[r], &status, &id) != cudaSuccess) {
      why = fmt::format("cudaStreamGetCaptureInfo failed on rank {}'s stream: {}", r,
                        cudaGetErrorString(cudaGetLastError()));
      return false;
    }
    if (status != cudaStreamCaptureStatusActive) id = 0;
    if (r == 0) first = id;
    if (id != first) {
      why = "the ranks' streams are captured apart (a graph per stream): one gpupeer call cannot span them";
      return false;
    }
  }
  return true;
}

// A one-process set's calls of every rank that paired up (one_process_calls.hpp), as one call
// of its communicator. Nothing of it is enqueued where the communicator refuses the arguments
// (kInvalidArgument) or the streams: the calls then go to NCCL (false).
bool runPaired(const std::vector<GpupeerCall>& calls, const PairedCalls& p, Status& result) {
  const GpupeerCall& first = calls[p.byRank[0]];
  const int n = first.state->ranks;
  std::vector<const void*> send(n);
  std::vector<void*> recv(n);
  std::vector<cudaStream_t> streams(n);
  for (int r = 0; r < n; ++r) {
    const GpupeerCall& c = calls[p.byRank[r]];
    send[r] = c.send;
    recv[r] = p.sendRecv ? calls[p.receiveByRank[r]].recv : c.recv;
    streams[r] = c.stream;
  }
  std::string why;
  if (!oneCaptureOrNone(streams, why)) {
    logTrace("{} of {} elements on {} ranks in one process to NCCL: {}", collOpName(first.op), first.count, n, why);
    return false;
  }
  Status s =
      first.state->oneProcess->run(first.op, send, recv, first.count, first.type, first.redop, first.root, streams);
  if (s.code() == ErrorCode::kInvalidArgument) {
    logInfo("{} of {} elements on {} ranks in one process to NCCL: gpupeer refused it: {}", collOpName(first.op),
            first.count, n, s.toString());
    return false;
  }
  result = s;
  return true;
}

// gpupeer's part of the group: collectives in order, then each communicator's sends and
// receives as one gpupeer group. Calls of a one-process set run as one call per pairing, at
// the place of its first call; a pairing that is not whole goes to NCCL (still inside NCCL's
// group). Every call is run even after a failure (so peers are not left waiting for a call
// that a rank skipped); the first failure is returned, NCCL's in `forwarded`.
Status runDeferred(std::vector<GpupeerCall>& calls, ncclResult_t& forwarded) {
  Status first;
  auto keep = [&first](const Status& s) {
    if (first.isOk() && !s.isOk()) first = s;
  };
  auto forward = [&](const PairedCalls& p) {
    if (!p.whole)
      logTrace("{} of {} elements on {} ranks in one process to NCCL: the ranks' calls do not pair up ({} calls; {})",
               collOpName(calls[p.members.front()].op), calls[p.members.front()].count, p.byRank.size(),
               p.members.size(), p.sendRecv ? "sends and receives other than one to the next rank each" : "not alike");
    for (int i : p.members)
      if (ncclResult_t r = forwardCall(calls[i]); r != ncclSuccess && forwarded == ncclSuccess) forwarded = r;
  };
  auto runOrForward = [&](const PairedCalls& p) {
    Status s;
    if (!p.whole || !runPaired(calls, p, s)) forward(p);
    keep(s);
  };
  std::vector<GroupedCall> grouped(calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const GpupeerCall& c = calls[i];
    grouped[i] = {c.state->oneProcess.get(),
                  c.state->ranks,
                  c.state->rank,
                  c.op,
                  c.receive,
                  c.count,
                  c.type,
                  c.redop,
                  c.root,
                  c.stream};
  }
  const std::vector<PairedCalls> pairings = pairGroupedCalls(grouped);
  std::vector<int> pairingStartingAt(calls.size(), -1);
  for (std::size_t k = 0; k < pairings.size(); ++k)
    if (!pairings[k].sendRecv) pairingStartingAt[pairings[k].members.front()] = static_cast<int>(k);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const GpupeerCall& c = calls[i];
    if (c.op == CollOp::kSendRecv) continue;
    if (c.state->oneProcess == nullptr) {
      keep(runCall(c));
    } else if (int k = pairingStartingAt[i]; k >= 0) {
      runOrForward(pairings[k]);
    }
  }
  for (const PairedCalls& p : pairings)
    if (p.sendRecv) runOrForward(p);
  std::vector<CommState*> comms;
  for (const GpupeerCall& c : calls)
    if (c.op == CollOp::kSendRecv && c.state->oneProcess == nullptr &&
        std::find(comms.begin(), comms.end(), c.state.get()) == comms.end())
      comms.push_back(c.state.get());
  for (CommState* comm : comms) {
    keep(comm->gpupeer->groupStart());
    for (const GpupeerCall& c : calls)
      if (c.op == CollOp::kSendRecv && c.state.get() == comm) keep(runCall(c));
    keep(comm->gpupeer->groupEnd());
  }
  calls.clear();
  return first;
}

}  // namespace

bool inGroup() { return group.depth > 0; }

void deferCall(GpupeerCall call) { group.calls.push_back(std::move(call)); }

void deferStart(std::shared_ptr<CommState> state) { group.toStart.push_back(std::move(state)); }

ncclResult_t groupStart() {
  ncclResult_t r = fromNccl(GPUPEER_REAL_NCCL(ncclGroupStart));
  if (r == ncclSuccess) ++group.depth;
  return r;
}

ncclResult_t groupEnd() {
  if (group.depth != 1) {
    if (group.depth > 1) --group.depth;
    return fromNccl(GPUPEER_REAL_NCCL(ncclGroupEnd));  // nested (or unmatched: NCCL says so)
  }
  ncclResult_t forwarded = ncclSuccess;
  Status ours = runDeferred(group.calls, forwarded);
  group.depth = 0;
  ncclResult_t r = fromNccl(GPUPEER_REAL_NCCL(ncclGroupEnd));
  if (r == ncclSuccess) r = fromNccl(forwarded);
  std::vector<std::shared_ptr<CommState>> starts = std::move(group.toStart);
  group.toStart.clear();
  if (r == ncclSuccess && !starts.empty()) startAndAdd(std::move(starts));
  if (!ours.isOk()) return failedCall(ours);
  return r;
}

ncclResult_t groupSimulateEnd(ncclSimInfo_t* info) {
  ncclResult_t r = fromNccl(GPUPEER_REAL_NCCL(ncclGroupSimulateEnd, info));
  if (group.depth > 0 && --group.depth == 0) {
    group.calls.clear();
    group.toStart.clear();
  }
  return r;
}

}  // namespace gpupeer::nccl_api
