#include "nccl_api/gpupeer_call.hpp"

#include <fmt/format.h>

#include <atomic>
#include <string>

#include "nccl_api/debug_log.hpp"
#include "nccl_api/real_nccl.hpp"
#include "nccl_api/route_table.hpp"

namespace gpupeer::nccl_api {
namespace {

thread_local std::string lastError;
thread_local bool lastFailureWasGpupeer = false;

// NCCL's unsigned types travel as the signed type of their size: copies move bytes, and sums
// and products wrap the same way in two's complement. Their min and max differ: NCCL's.
std::optional<DataType> gpupeerType(ncclDataType_t type, bool ordered) {
  switch (type) {
    case ncclInt8: return DataType::kInt8;
    case ncclUint8: return DataType::kUInt8;
    case ncclInt32: return DataType::kInt32;
    case ncclUint32: return ordered ? std::nullopt : std::optional(DataType::kInt32);
    case ncclInt64: return DataType::kInt64;
    case ncclUint64: return ordered ? std::nullopt : std::optional(DataType::kInt64);
    case ncclFloat16: return DataType::kFloat16;
    case ncclFloat32: return DataType::kFloat32;
    case ncclFloat64: return DataType::kFloat64;
    case ncclBfloat16: return DataType::kBFloat16;
    case ncclFloat8e4m3: return DataType::kFloat8E4M3;
    case ncclFloat8e5m2: return DataType::kFloat8E5M2;
    default: return std::nullopt;
  }
}

std::optional<RedOp> gpupeerOp(ncclRedOp_t op) {
  switch (op) {
    case ncclSum: return RedOp::kSum;
    case ncclProd: return RedOp::kProd;
    case ncclMax: return RedOp::kMax;
    case ncclMin: return RedOp::kMin;
    case ncclAvg: return RedOp::kAvg;
    default: return std::nullopt;  // ncclRedOpCreatePreMulSum's
  }
}

// Whether (op, why) is met for the first time. Every `why` is a string literal of this file, so
// its address names it: a few atomic slots per operation, no lock and no allocation on the
// call path.
bool firstTime(CollOp op, const char* why) {
  constexpr int kOps = static_cast<int>(CollOp::kSendRecv) + 1, kSlots = 8;
  static std::atomic<const char*> seen[kOps][kSlots];
  for (std::atomic<const char*>& slot : seen[static_cast<int>(op)]) {
    const char* held = slot.load(std::memory_order_acquire);
    if (held == nullptr && slot.compare_exchange_strong(held, why)) return true;
    if (held == why) return false;
  }
  return false;  // more reasons than slots: no more lines
}

// At INFO, each (operation, where, why) once per process; at TRACE, every call.
void noteRoute(CollOp op, std::size_t bytes, int ranks, const char* where, const char* why) {
  if (logLevel() >= LogLevel::kTrace) {
    logTrace("{} of {} bytes on {} ranks to {}: {}", collOpName(op), bytes, ranks, where, why);
    return;
  }
  if (logLevel() >= LogLevel::kInfo && firstTime(op, why))
    logInfo("{} to {}: {} (first such call: {} bytes on {} ranks; GPUPEER_NCCL_DEBUG=TRACE shows every call)",
            collOpName(op), where, why, bytes, ranks);
}

}  // namespace

std::optional<GpupeerCall> routeCall(ncclComm_t comm, CollOp op, const void* send, void* recv, std::size_t count,
                                     ncclDataType_t ncclType, ncclRedOp_t ncclOp, int root, cudaStream_t stream,
                                     bool grouped, bool receive) {
  std::shared_ptr<CommState> state = findComm(comm);
  // Empty calls (nccl-tests makes them at sizes below the rank count) are NCCL's no-ops.
  if (state == nullptr || count == 0) return std::nullopt;
  const bool inParts = state->acrossHosts != nullptr;
  if (state->gpupeer == nullptr && state->oneProcess == nullptr && !inParts) return std::nullopt;
  const bool reduces = collOpReduces(op);
  const bool ordered = reduces && (ncclOp == ncclMax || ncclOp == ncclMin);
  std::optional<DataType> type = gpupeerType(ncclType, ordered);
  std::optional<RedOp> redop = reduces ? gpupeerOp(ncclOp) : std::optional(RedOp::kSum);
  const std::size_t bytes = type ? collectiveBytes(op, count, *type, state->ranks) : 0;
  if (!type || !redop || (reduces && !checkRedOpForType(*redop, *type).isOk())) {
    noteRoute(op, bytes, state->ranks, "NCCL", "a type or reduction operator gpupeer does not have");
    return std::nullopt;
  }
  if (inParts) {
    if (op != CollOp::kAllReduce) {
      noteRoute(op, bytes, state->ranks, "NCCL", "ranks on several hosts: only an all-reduce runs in parts");
      return std::nullopt;
    }
    if (grouped) {
      // NCCL's part would wait for the group's end, after gpupeer's last part.
      noteRoute(op, bytes, state->ranks, "NCCL", "ranks on several hosts: an all-reduce in a group is NCCL's whole");
      return std::nullopt;
    }
    if (count % state->acrossHosts->inside->ranks != 0) {
      noteRoute(
          op, bytes, state->ranks, "NCCL",
          "ranks on several hosts: the count is not a multiple of the ranks per host, whose shares the parts are");
      return std::nullopt;
    }
  }
  const RouteMode mode = routeMode();
  const bool oneProcess = state->oneProcess != nullptr;
  if (oneProcess && !grouped) {
    // One thread cannot wait in one rank's call for its peers' calls it has yet to make.
    noteRoute(op, bytes, state->ranks, "NCCL",
              "one process drives every rank: gpupeer takes a call only in a group with every rank's");
    return std::nullopt;
  }
  if (mode == RouteMode::kTable && state->sharesProcess) {
    noteRoute(op, bytes, state->ranks, "NCCL",
              "one process drives several GPUs of this communicator: NCCL measured faster");
    return std::nullopt;
  }
  const CallShape shape = inParts      ? CallShape::kAcrossHosts
                          : oneProcess ? CallShape::kOneProcess
                                       : CallShape::kProcessPerRank;
  if (mode == RouteMode::kTable && !measuredFaster(op, bytes, state->ranks, shape)) {
    noteRoute(op, bytes, state->ranks, "NCCL", "NCCL measured faster at this size and rank count");
    return std::nullopt;
  }
  noteRoute(
      op, bytes, state->ranks, "gpupeer",
      mode == RouteMode::kTable ? "gpupeer measured faster at this size and rank count" : "GPUPEER_NCCL_ROUTE=gpupeer");
  return GpupeerCall{std::move(state), op, receive, send, recv, count, *type, *redop, root, stream, ncclType, ncclOp};
}

// An all-reduce across hosts in three parts on the call's stream: gpupeer's reduce-scatter among
// this host's ranks leaves this rank's share (the count over the ranks per host) reduced over
// the host; NCCL's all-reduce of that share among the ranks at this place on every host reduces
// it over every host; gpupeer's all-gather among this host's ranks gives each of them the whole.
// Only the shares cross hosts, every rank's at once. An average is one too: the host's ranks
// average, then the hosts do.
Status runInParts(const GpupeerCall& c) {
  const CommState::AcrossHosts& parts = *c.state->acrossHosts;
  RankCommunicator& inside = *parts.inside->gpupeer;
  const std::size_t share = c.count / parts.inside->ranks;
  void* mine = static_cast<char*>(c.recv) + parts.inside->rank * share * dataTypeSize(c.type);
  GPUPEER_RETURN_IF_ERROR(inside.reduceScatter(c.send, mine, share, c.type, c.redop, c.stream));
  if (ncclResult_t r =
          GPUPEER_REAL_NCCL(ncclAllReduce, mine, mine, share, c.ncclType, c.ncclOp, parts.across, c.stream);
      r != ncclSuccess)
    return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("NCCL's all-reduce across hosts, the second part, failed: {}",
                                                         realNccl().ncclGetErrorString(r)));
  return inside.allGather(mine, c.recv, share, c.type, c.stream);
}

Status runCall(const GpupeerCall& c) {
  if (c.state->acrossHosts != nullptr) return runInParts(c);
  RankCommunicator& g = *c.state->gpupeer;
  switch (c.op) {
    case CollOp::kAllReduce: return g.allReduce(c.send, c.recv, c.count, c.type, c.redop, c.stream);
    case CollOp::kAllGather: return g.allGather(c.send, c.recv, c.count, c.type, c.stream);
    case CollOp::kReduceScatter: return g.reduceScatter(c.send, c.recv, c.count, c.type, c.redop, c.stream);
    case CollOp::kBroadcast: return g.broadcast(c.send, c.recv, c.count, c.type, c.root, c.stream);
    case CollOp::kReduce: return g.reduce(c.send, c.recv, c.count, c.type, c.redop, c.root, c.stream);
    case CollOp::kAllToAll: return g.allToAll(c.send, c.recv, c.count, c.type, c.stream);
    case CollOp::kSendRecv:
      return c.receive ? g.recv(c.recv, c.count, c.type, c.root, c.stream)
                       : g.send(c.send, c.count, c.type, c.root, c.stream);
  }
  return GPUPEER_ERROR(ErrorCode::kInternal, "an operation gpupeer does not know");
}

ncclResult_t forwardCall(const GpupeerCall& c) {
  ncclComm_t comm = c.state->real;
  const ncclDataType_t t = c.ncclType;
  switch (c.op) {
    case CollOp::kAllReduce:
      return GPUPEER_REAL_NCCL(ncclAllReduce, c.send, c.recv, c.count, t, c.ncclOp, comm, c.stream);
    case CollOp::kAllGather: return GPUPEER_REAL_NCCL(ncclAllGather, c.send, c.recv, c.count, t, comm, c.stream);
    case CollOp::kReduceScatter:
      return GPUPEER_REAL_NCCL(ncclReduceScatter, c.send, c.recv, c.count, t, c.ncclOp, comm, c.stream);
    case CollOp::kBroadcast:
      return GPUPEER_REAL_NCCL(ncclBroadcast, c.send, c.recv, c.count, t, c.root, comm, c.stream);
    case CollOp::kReduce:
      return GPUPEER_REAL_NCCL(ncclReduce, c.send, c.recv, c.count, t, c.ncclOp, c.root, comm, c.stream);
    case CollOp::kAllToAll: return GPUPEER_REAL_NCCL(ncclAlltoAll, c.send, c.recv, c.count, t, comm, c.stream);
    case CollOp::kSendRecv:
      return c.receive ? GPUPEER_REAL_NCCL(ncclRecv, c.recv, c.count, t, c.root, comm, c.stream)
                       : GPUPEER_REAL_NCCL(ncclSend, c.send, c.count, t, c.root, comm, c.stream);
  }
  return ncclInternalError;
}

ncclResult_t failedCall(const Status& status) {
  lastError = "gpupeer: " + status.toString();
  lastFailureWasGpupeer = true;
  logWarn("{}", lastError);
  switch (status.code()) {
    case ErrorCode::kInvalidArgument: return ncclInvalidArgument;
    case ErrorCode::kTimeout: return ncclRemoteError;
    case ErrorCode::kCuda: return ncclUnhandledCudaError;
    case ErrorCode::kSystem: return ncclSystemError;
    default: return ncclInternalError;
  }
}

const char* lastGpupeerError() { return lastFailureWasGpupeer ? lastError.c_str() : nullptr; }

ncclResult_t fromNccl(ncclResult_t result) {
  if (result != ncclSuccess && result != ncclInProgress) lastFailureWasGpupeer = false;
  return result;
}

}  // namespace gpupeer::nccl_api
