// One process per GPU: gpupeer::RankCommunicator through the C API.
#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <string>

#include "c_api_enums.hpp"
#include "c_api_error.hpp"
#include "gpupeer/rank_communicator.hpp"

struct gpupeer_rank_comm {
  std::unique_ptr<gpupeer::RankCommunicator> comm;
};

using namespace gpupeer;
using capi::fail;
using capi::guarded;

namespace {

RankCommOptions optionsFor(int device, int timeoutMs) {
  RankCommOptions options;
  options.device = device;
  if (timeoutMs > 0) options.timeoutMs = timeoutMs;
  return options;
}

int keep(Result<std::unique_ptr<RankCommunicator>> made, gpupeer_rank_comm** comm, gpupeer_error** error) {
  if (!made.isOk()) return fail(made.status(), error);
  auto handle = std::make_unique<gpupeer_rank_comm>();
  handle->comm = std::move(made).value();
  *comm = handle.release();
  return GPUPEER_OK;
}

}  // namespace

extern "C" {

int gpupeer_get_unique_id(char* id, gpupeer_error** error) {
  return guarded(error, [&] {
    if (!id) return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, "id: the output must not be null"), error);
    Result<UniqueId> made = makeUniqueId();
    if (!made.isOk()) return fail(made.status(), error);
    std::memcpy(id, made.value().bytes.data(), UniqueId::kBytes);
    return static_cast<int>(GPUPEER_OK);
  });
}

int gpupeer_rank_comm_init(int nranks, const char* id, int rank, int device, int timeout_ms, gpupeer_rank_comm** comm,
                           gpupeer_error** error) {
  static_assert(UniqueId::kBytes == GPUPEER_UNIQUE_ID_BYTES, "c_api.h's id size is UniqueId's");
  return guarded(error, [&] {
    if (!id || !comm) return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, "id and comm must not be null"), error);
    UniqueId uid;
    std::memcpy(uid.bytes.data(), id, UniqueId::kBytes);
    return keep(RankCommunicator::init(nranks, uid, rank, optionsFor(device, timeout_ms)), comm, error);
  });
}

int gpupeer_rank_comm_init_all_gather(int nranks, int rank, gpupeer_all_gather_fn all_gather, void* user, int device,
                                      int timeout_ms, gpupeer_rank_comm** comm, gpupeer_error** error) {
  return guarded(error, [&] {
    if (!all_gather || !comm)
      return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, "all_gather and comm must not be null"), error);
    if (nranks < 1) return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("nranks: {}", nranks)), error);
    // Kept by the communicator for registerBuffer's exchanges after this call returned: the
    // function, its user pointer and the rank count are held by value.
    AllGatherFn gather = [nranks, all_gather, user](const std::string& blob) -> Result<std::string> {
      std::string all(blob.size() * static_cast<std::size_t>(nranks), '\0');
      char message[1024] = {};
      if (all_gather(user, blob.data(), blob.size(), all.data(), message) != 0) {
        message[sizeof(message) - 1] = '\0';
        return GPUPEER_ERROR(ErrorCode::kSystem, std::string("the caller's all-gather failed: ") + message);
      }
      return all;
    };
    return keep(RankCommunicator::initWithAllGather(nranks, rank, gather, optionsFor(device, timeout_ms)), comm, error);
  });
}

void gpupeer_rank_comm_destroy(gpupeer_rank_comm* comm) { delete comm; }
int gpupeer_rank_comm_rank(const gpupeer_rank_comm* comm) { return comm ? comm->comm->rank() : -1; }
int gpupeer_rank_comm_ranks(const gpupeer_rank_comm* comm) { return comm ? comm->comm->ranks() : 0; }
int gpupeer_rank_comm_device(const gpupeer_rank_comm* comm) { return comm ? comm->comm->device() : -1; }
const char* gpupeer_rank_comm_transport(const gpupeer_rank_comm* comm) {
  return comm ? comm->comm->transport().c_str() : "";
}

int gpupeer_rank_comm_run(gpupeer_rank_comm* comm, int op, const void* send, void* recv, size_t count, int type,
                          int redop, int root, void* stream, gpupeer_error** error) {
  return guarded(error, [&] {
    if (!comm) return fail(capi::nullComm(), error);
    Result<DataType> t = capi::dataTypeFromC(type);
    if (!t.isOk()) return fail(t.status(), error);
    Result<RedOp> r = capi::redOpFromC(redop);
    if (!r.isOk()) return fail(r.status(), error);
    auto s = static_cast<cudaStream_t>(stream);
    RankCommunicator& c = *comm->comm;
    switch (op) {
      case GPUPEER_ALL_REDUCE: return capi::finish(c.allReduce(send, recv, count, t.value(), r.value(), s), error);
      case GPUPEER_ALL_GATHER: return capi::finish(c.allGather(send, recv, count, t.value(), s), error);
      case GPUPEER_REDUCE_SCATTER:
        return capi::finish(c.reduceScatter(send, recv, count, t.value(), r.value(), s), error);
      case GPUPEER_BROADCAST: return capi::finish(c.broadcast(send, recv, count, t.value(), root, s), error);
      case GPUPEER_REDUCE: return capi::finish(c.reduce(send, recv, count, t.value(), r.value(), root, s), error);
      case GPUPEER_ALL_TO_ALL: return capi::finish(c.allToAll(send, recv, count, t.value(), s), error);
      default:
        return fail(
            GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                          fmt::format("op: {} is not a collective of one rank (send/recv have their own calls)", op)),
            error);
    }
  });
}

int gpupeer_rank_comm_send(gpupeer_rank_comm* comm, const void* buffer, size_t count, int type, int peer, void* stream,
                           gpupeer_error** error) {
  return guarded(error, [&] {
    if (!comm) return fail(capi::nullComm(), error);
    Result<DataType> t = capi::dataTypeFromC(type);
    if (!t.isOk()) return fail(t.status(), error);
    return capi::finish(comm->comm->send(buffer, count, t.value(), peer, static_cast<cudaStream_t>(stream)), error);
  });
}

int gpupeer_rank_comm_recv(gpupeer_rank_comm* comm, void* buffer, size_t count, int type, int peer, void* stream,
                           gpupeer_error** error) {
  return guarded(error, [&] {
    if (!comm) return fail(capi::nullComm(), error);
    Result<DataType> t = capi::dataTypeFromC(type);
    if (!t.isOk()) return fail(t.status(), error);
    return capi::finish(comm->comm->recv(buffer, count, t.value(), peer, static_cast<cudaStream_t>(stream)), error);
  });
}

int gpupeer_rank_comm_group_start(gpupeer_rank_comm* comm, gpupeer_error** error) {
  return guarded(error,
                 [&] { return comm ? capi::finish(comm->comm->groupStart(), error) : fail(capi::nullComm(), error); });
}

int gpupeer_rank_comm_group_end(gpupeer_rank_comm* comm, gpupeer_error** error) {
  return guarded(error,
                 [&] { return comm ? capi::finish(comm->comm->groupEnd(), error) : fail(capi::nullComm(), error); });
}

int gpupeer_rank_comm_check_error(gpupeer_rank_comm* comm, gpupeer_error** error) {
  return guarded(error,
                 [&] { return comm ? capi::finish(comm->comm->checkError(), error) : fail(capi::nullComm(), error); });
}

void gpupeer_rank_comm_abort(gpupeer_rank_comm* comm) {
  if (comm) comm->comm->abort();
}

int gpupeer_rank_comm_register_buffer(gpupeer_rank_comm* comm, void* ptr, size_t bytes, gpupeer_error** error) {
  return guarded(error, [&] {
    return comm ? capi::finish(comm->comm->registerBuffer(ptr, bytes), error) : fail(capi::nullComm(), error);
  });
}

int gpupeer_rank_comm_deregister_buffer(gpupeer_rank_comm* comm, void* ptr, gpupeer_error** error) {
  return guarded(error, [&] {
    return comm ? capi::finish(comm->comm->deregisterBuffer(ptr), error) : fail(capi::nullComm(), error);
  });
}

const char* gpupeer_rank_comm_registration_mechanism(const gpupeer_rank_comm* comm, const void* ptr) {
  return comm ? comm->comm->registrationMechanism(ptr) : nullptr;
}

}  // extern "C"
