#pragma once
// ncclGroupStart/ncclGroupEnd with calls on both sides. NCCL's calls of a group go to the real
// NCCL inside its own group as they are made; gpupeer's are kept and run at the outermost
// ncclGroupEnd, before NCCL's group is ended: first the collectives in the order they were
// made, then each communicator's sends and receives together (so a cycle of them cannot
// deadlock). Which side a call takes depends only on the call, so every rank splits a group
// alike, and gpupeer's part never waits for an NCCL part of any rank. Communicators made inside
// a group are started once NCCL has made them, at the group's end.

#include <memory>

#include "nccl_api/comm_state.hpp"
#include "nccl_api/gpupeer_call.hpp"

namespace gpupeer::nccl_api {

/// Whether the calling thread is inside ncclGroupStart/ncclGroupEnd.
bool inGroup();
/// Keeps a call gpupeer runs at the group's end.
void deferCall(GpupeerCall call);
/// Keeps a communicator to start at the group's end.
void deferStart(std::shared_ptr<CommState> state);

/// The group's edges; both pass NCCL's own result on (or gpupeer's first failure).
ncclResult_t groupStart();
ncclResult_t groupEnd();
/// ncclGroupSimulateEnd ends the group without running it: gpupeer's calls are dropped too.
ncclResult_t groupSimulateEnd(ncclSimInfo_t* info);

}  // namespace gpupeer::nccl_api
