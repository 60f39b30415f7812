#pragma once
// One NCCL call as gpupeer runs it: which calls it takes (routeCall) and running one.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <memory>
#include <optional>

#include "gpupeer/collective_types.hpp"
#include "gpupeer/status.hpp"
#include "nccl_api/comm_state.hpp"

namespace gpupeer::nccl_api {

struct GpupeerCall {
  std::shared_ptr<CommState> state;
  CollOp op = CollOp::kAllReduce;  ///< kSendRecv for ncclSend and ncclRecv
  bool receive = false;            ///< ncclRecv
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  DataType type = DataType::kFloat32;
  RedOp redop = RedOp::kSum;
  int root = -1;  ///< the root of a broadcast or reduce; the peer of a send or receive
  cudaStream_t stream = nullptr;
  /// The program's own type and operator, for NCCL where a one-process set's calls do not pair
  /// up after all (forwardCall).
  ncclDataType_t ncclType = ncclFloat32;
  ncclRedOp_t ncclOp = ncclSum;
};

/// The call as gpupeer would run it, or nullopt where it goes to NCCL: a communicator without
/// gpupeer, a type or reduction gpupeer lacks (ncclUint32 min, integer averages, operators made
/// by ncclRedOpCreatePreMulSum), or a size the route table gives NCCL. A rank of a one-process
/// set gets gpupeer only inside a group (`grouped`), where the group's end pairs it with its
/// peers' calls.
/// `redop` is ignored for operations without one.
std::optional<GpupeerCall> routeCall(ncclComm_t comm, CollOp op, const void* send, void* recv, std::size_t count,
                                     ncclDataType_t type, ncclRedOp_t redop, int root, cudaStream_t stream,
                                     bool grouped, bool receive = false);

/// Enqueues the call on its stream (a send or receive alone, as a group of one). Not for a rank
/// of a one-process set, whose calls run paired (group_calls.cpp).
Status runCall(const GpupeerCall& call);

/// Makes the call with the real NCCL, with the program's arguments.
ncclResult_t forwardCall(const GpupeerCall& call);

/// NCCL's code for a gpupeer failure; the message is logged and kept for ncclGetLastError.
ncclResult_t failedCall(const Status& status);
/// The text ncclGetLastError gives for this thread's last failure, if it was gpupeer's.
const char* lastGpupeerError();
/// Notes a result NCCL gave (so that ncclGetLastError then reads NCCL's text); returns it.
ncclResult_t fromNccl(ncclResult_t result);

}  // namespace gpupeer::nccl_api
