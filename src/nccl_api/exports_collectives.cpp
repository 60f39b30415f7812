// The collectives and sends and receives gpupeer may take: each is routed by the call alone
// (routeCall); what gpupeer does not take goes to the real NCCL with its arguments unchanged.

#include <nccl.h>

#include "nccl_api/gpupeer_call.hpp"
#include "nccl_api/group_calls.hpp"
#include "nccl_api/real_nccl.hpp"

namespace gn = gpupeer::nccl_api;
using gpupeer::CollOp;

namespace {

// routeCall for a call made now, inside a group or not.
std::optional<gn::GpupeerCall> route(ncclComm_t comm, CollOp op, const void* send, void* recv, std::size_t count,
                                     ncclDataType_t type, ncclRedOp_t redop, int root, cudaStream_t stream,
                                     bool receive = false) {
  return gn::routeCall(comm, op, send, recv, count, type, redop, root, stream, gn::inGroup(), receive);
}

// Inside a group the call waits for the group's end; outside it is enqueued now.
ncclResult_t submit(gn::GpupeerCall call) {
  if (gn::inGroup()) {
    gn::deferCall(std::move(call));
    return ncclSuccess;
  }
  gpupeer::Status s = gn::runCall(call);
  return s.isOk() ? ncclSuccess : gn::failedCall(s);
}

}  // namespace

extern "C" {

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclAllReduce, sendbuff, recvbuff, count, datatype, op, comm, stream);
  if (auto c = route(comm, CollOp::kAllReduce, sendbuff, recvbuff, count, datatype, op, -1, stream))
    return submit(std::move(*c));
  return gn::fromNccl(GPUPEER_REAL_NCCL(ncclAllReduce, sendbuff, recvbuff, count, datatype, op, comm, stream));
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclAllGather, sendbuff, recvbuff, sendcount, datatype, comm, stream);
  if (auto c = route(comm, CollOp::kAllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum, -1, stream))
    return submit(std::move(*c));
  return gn::fromNccl(GPUPEER_REAL_NCCL(ncclAllGather, sendbuff, recvbuff, sendcount, datatype, comm, stream));
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
  if (auto c = route(comm, CollOp::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, -1, stream))
    return submit(std::move(*c));
  return gn::fromNccl(GPUPEER_REAL_NCCL(ncclReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, comm, stream));
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclBroadcast, sendbuff, recvbuff, count, datatype, root, comm, stream);
  if (auto c = route(comm, CollOp::kBroadcast, sendbuff, recvbuff, count, datatype, ncclSum, root, stream))
    return submit(std::move(*c));
  return gn::fromNccl(GPUPEER_REAL_NCCL(ncclBroadcast, sendbuff, recvbuff, count, datatype, root, comm, stream));
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclBcast, buff, count, datatype, root, comm, stream);
  if (auto c = route(comm, CollOp::kBroadcast, buff, buff, count, datatype, ncclSum, root, stream))
    return submit(std::move(*c));
  return gn::fromNccl(GPUPEER_REAL_NCCL(ncclBcast, buff, count, datatype, root, comm, stream));
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclReduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
  if (auto c = route(comm, CollOp::kReduce, sendbuff, recvbuff, count, datatype, op, root, stream))
    return submit(std::move(*c));
  return gn::fromNccl(GPUPEER_REAL_NCCL(ncclReduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream));
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclAlltoAll, sendbuff, recvbuff, count, datatype, comm, stream);
  if (auto c = route(comm, CollOp::kAllToAll, sendbuff, recvbuff, count, datatype, ncclSum, -1, stream))
    return submit(std::move(*c));
  return gn::fromNccl(GPUPEER_REAL_NCCL(ncclAlltoAll, sendbuff, recvbuff, count, datatype, comm, stream));
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclSend, sendbuff, count, datatype, peer, comm, stream);
  if (auto c = route(comm, CollOp::kSendRecv, sendbuff, nullptr, count, datatype, ncclSum, peer, stream))
    return submit(std::move(*c));
  return gn::fromNccl(GPUPEER_REAL_NCCL(ncclSend, sendbuff, count, datatype, peer, comm, stream));
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclRecv, recvbuff, count, datatype, peer, comm, stream);
  if (auto c =
          route(comm, CollOp::kSendRecv, nullptr, recvbuff, count, datatype, ncclSum, peer, stream, /*receive=*/true))
    return submit(std::move(*c));
  return gn::fromNccl(GPUPEER_REAL_NCCL(ncclRecv, recvbuff, count, datatype, peer, comm, stream));
}

ncclResult_t ncclGroupStart() {
  GPUPEER_NCCL_INTERNAL_CALL(ncclGroupStart);
  return gn::groupStart();
}
ncclResult_t ncclGroupEnd() {
  GPUPEER_NCCL_INTERNAL_CALL(ncclGroupEnd);
  return gn::groupEnd();
}
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo) {
  GPUPEER_NCCL_INTERNAL_CALL(ncclGroupSimulateEnd, simInfo);
  return gn::groupSimulateEnd(simInfo);
}

}  // extern "C"
