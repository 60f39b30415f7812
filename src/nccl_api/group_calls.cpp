#include "nccl_api/group_calls.hpp"

#include <vector>

#include "nccl_api/comm_start.hpp"
#include "nccl_api/real_nccl.hpp"

namespace gpupeer::nccl_api {
namespace {

struct GroupState {
  int depth = 0;
  std::vector<GpupeerCall> calls;
  std::vector<std::shared_ptr<CommState>> toStart;
};
thread_local GroupState group;

// gpupeer's part of the group: collectives in order, then each communicator's sends and
// receives as one gpupeer group. Every call is run even after a failure (so peers are not left
// waiting for a call that a rank skipped); the first failure is returned.
Status runDeferred(std::vector<GpupeerCall>& calls) {
  Status first;
  auto keep = [&first](const Status& s) {
    if (first.isOk() && !s.isOk()) first = s;
  };
  for (const GpupeerCall& c : calls)
    if (c.op != CollOp::kSendRecv) keep(runCall(c));
  std::vector<CommState*> comms;
  for (const GpupeerCall& c : calls)
    if (c.op == CollOp::kSendRecv && std::find(comms.begin(), comms.end(), c.state.get()) == comms.end())
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
  Status ours = runDeferred(group.calls);
  group.depth = 0;
  ncclResult_t r = fromNccl(GPUPEER_REAL_NCCL(ncclGroupEnd));
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
