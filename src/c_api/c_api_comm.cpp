// One process, several GPUs: gpupeer::Communicator through the C API.
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "c_api_enums.hpp"
#include "c_api_error.hpp"
#include "cuda/cuda_status.hpp"
#include "gpupeer/communicator.hpp"

struct gpupeer_comm {
  std::unique_ptr<gpupeer::Communicator> comm;
  // Reused between calls so an eager call allocates nothing once the sizes are known.
  std::vector<const void*> send;
  std::vector<void*> recv;
  std::vector<cudaStream_t> streams;
};

using namespace gpupeer;
using capi::fail;
using capi::guarded;

extern "C" {

int gpupeer_pointer_device(const void* pointer, int* device, gpupeer_error** error) {
  return guarded(error, [&] {
    if (!device) return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, "device: the output must not be null"), error);
    cudaPointerAttributes attributes{};
    cudaError_t e = cudaPointerGetAttributes(&attributes, pointer);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return fail(cudaFailure(e, "cudaPointerGetAttributes", -1, __FILE__, __LINE__), error);
    }
    bool onDevice = attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
    *device = onDevice ? attributes.device : -1;
    return static_cast<int>(GPUPEER_OK);
  });
}

int gpupeer_comm_create(const int* devices, int device_count, gpupeer_comm** comm, gpupeer_error** error) {
  return guarded(error, [&] {
    if (!comm) return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, "comm: the output must not be null"), error);
    if (device_count < 0 || (device_count > 0 && !devices))
      return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, "devices: a list of device_count ordinals"), error);
    Result<std::unique_ptr<Communicator>> made =
        Communicator::create(std::vector<int>(devices, devices + device_count));
    if (!made.isOk()) return fail(made.status(), error);
    auto handle = std::make_unique<gpupeer_comm>();
    handle->comm = std::move(made).value();
    *comm = handle.release();
    return static_cast<int>(GPUPEER_OK);
  });
}

void gpupeer_comm_destroy(gpupeer_comm* comm) { delete comm; }
int gpupeer_comm_ranks(const gpupeer_comm* comm) { return comm ? comm->comm->ranks() : 0; }
int gpupeer_comm_device(const gpupeer_comm* comm, int rank) {
  return comm && rank >= 0 && rank < comm->comm->ranks() ? comm->comm->device(rank) : -1;
}
const char* gpupeer_comm_transport(const gpupeer_comm* comm) { return comm ? comm->comm->transport().c_str() : ""; }

int gpupeer_comm_run(gpupeer_comm* comm, int op, const void* const* send, void* const* recv, size_t count, int type,
                     int redop, int root, void* const* streams, gpupeer_error** error) {
  return guarded(error, [&] {
    if (!comm) return fail(capi::nullComm(), error);
    Result<CollOp> o = capi::collOpFromC(op);
    if (!o.isOk()) return fail(o.status(), error);
    Result<DataType> t = capi::dataTypeFromC(type);
    if (!t.isOk()) return fail(t.status(), error);
    Result<RedOp> r = capi::redOpFromC(redop);
    if (!r.isOk()) return fail(r.status(), error);
    if (!send || !recv || !streams)
      return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, "send, recv and streams: one entry per rank, not null"),
                  error);
    const int n = comm->comm->ranks();
    comm->send.assign(send, send + n);
    comm->recv.assign(recv, recv + n);
    comm->streams.resize(n);
    for (int i = 0; i < n; ++i) comm->streams[i] = static_cast<cudaStream_t>(streams[i]);
    Status s = comm->comm->run(o.value(), comm->send, comm->recv, count, t.value(), r.value(), root, comm->streams);
    return capi::finish(s, error);
  });
}

int gpupeer_comm_check_barriers(gpupeer_comm* comm, gpupeer_error** error) {
  return guarded(error, [&] {
    if (!comm) return fail(capi::nullComm(), error);
    Status s = comm->comm->checkBarriers();
    return capi::finish(s, error);
  });
}

}  // extern "C"
