// The build without CUDA (GPUPEER_WITH_CUDA=OFF): the communicator's C entries, whose own file
// (c_api_comm.cpp) it leaves out, each failing as kUnsupported with why, so that the library
// keeps every function of c_api.h and a caller (the Python package) loads it for diagnosis.
// The one-process-per-GPU entries are optional in c_api.h's callers and left out.
#include <string>

#include "c_api_error.hpp"
#include "gpupeer/probe.hpp"

struct gpupeer_comm {};

using namespace gpupeer;
using capi::fail;
using capi::guarded;

namespace {

int needsCuda(const char* call, gpupeer_error** error) {
  return guarded(error, [&] {
    return fail(
        GPUPEER_ERROR(ErrorCode::kUnsupported, std::string(kBuiltWithoutCuda) + ": " + call + " needs a GPU build"),
        error);
  });
}

}  // namespace

extern "C" {

int gpupeer_pointer_device(const void*, int*, gpupeer_error** error) {
  return needsCuda("gpupeer_pointer_device", error);
}
int gpupeer_comm_create(const int*, int, gpupeer_comm** comm, gpupeer_error** error) {
  if (comm) *comm = nullptr;
  return needsCuda("gpupeer_comm_create", error);
}
void gpupeer_comm_destroy(gpupeer_comm* comm) { delete comm; }
int gpupeer_comm_ranks(const gpupeer_comm*) { return 0; }
int gpupeer_comm_device(const gpupeer_comm*, int) { return -1; }
const char* gpupeer_comm_transport(const gpupeer_comm*) { return ""; }
int gpupeer_comm_run(gpupeer_comm*, int, const void* const*, void* const*, size_t, int, int, int, void* const*,
                     gpupeer_error** error) {
  return needsCuda("gpupeer_comm_run", error);
}
int gpupeer_comm_check_barriers(gpupeer_comm*, gpupeer_error** error) {
  return needsCuda("gpupeer_comm_check_barriers", error);
}

}  // extern "C"
