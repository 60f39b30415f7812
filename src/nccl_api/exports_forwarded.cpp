// Every function of nccl.h, passed unchanged to the real NCCL. Defined weak: the functions
// gpupeer takes part in are defined again (strong) in the other exports_*.cpp files, and the
// linker keeps those. Each pnccl twin (NCCL's profiling names) runs what its nccl name runs;
// the library is linked -Bsymbolic, so a profiler that wraps the nccl name and calls the
// pnccl one does not loop back into itself.

#include <nccl.h>

// ncclResetDebugInit is deprecated in nccl.h but still part of it: it is exported (and tested) too.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "nccl_api/real_nccl.hpp"

namespace {

template <typename T>
T missing(const char* name);
template <>
ncclResult_t missing<ncclResult_t>(const char* name) {
  return gpupeer::nccl_api::missingRealFunction(name);
}
template <>
const char* missing<const char*>(const char* name) {
  gpupeer::nccl_api::missingRealFunction(name);
  return "libgpupeer_nccl.so found no real NCCL to ask (GPUPEER_NCCL_DEBUG=WARN says why)";
}
template <>
void missing<void>(const char* name) {
  gpupeer::nccl_api::missingRealFunction(name);
}

}  // namespace

extern "C" {

#define NCCL_API_FN(ret, name, params, args)         \
  __attribute__((weak)) ret name params {            \
    auto real = gpupeer::nccl_api::realNccl().name;  \
    if (real == nullptr) return missing<ret>(#name); \
    return real args;                                \
  }
#include "nccl_api/nccl_functions.def"
#undef NCCL_API_FN

#define NCCL_API_FN(ret, name, params, args) \
  ret p##name params { return name args; }
#include "nccl_api/nccl_functions.def"
#undef NCCL_API_FN

}  // extern "C"
