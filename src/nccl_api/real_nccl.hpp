#pragma once
// The real NCCL behind libgpupeer_nccl.so: every function of nccl.h as a pointer into the
// library that NCCL's calls are passed to. Loaded once, on first use, from any thread.

#include <nccl.h>

#include <string>

namespace gpupeer::nccl_api {

struct RealNccl {
#define NCCL_API_FN(ret, name, params, args) ret(*name) params = nullptr;
#include "nccl_api/nccl_functions.def"
#undef NCCL_API_FN
  /// Where it was found ("" when it was not), and why not.
  std::string path;
  std::string problem;
  bool loaded() const { return problem.empty(); }
};

/// The real NCCL, found as docs/nccl-api.md describes: GPUPEER_NCCL_REAL_LIBRARY; else the
/// next definition of NCCL's functions after this library in the process (LD_PRELOAD beside a
/// program that loads libnccl.so.2); else the first libnccl.so.2 the loader or the usual
/// folders give that is not this library.
const RealNccl& realNccl();

/// Whether `returnAddress` lies in the real NCCL: NCCL calls some of its own exported functions
/// (ncclCommGetAsyncError while enqueueing, ncclGroupStart/End inside ncclCommInitAll, sends and
/// receives inside its all-to-all) and, with this library preloaded, those calls reach it;
/// they must go back to NCCL untouched.
bool fromRealNccl(const void* returnAddress);

/// NCCL's answer for a call the real library cannot take (not found, or too old to have the
/// function): ncclSystemError for results; a warning names the problem once.
ncclResult_t missingRealFunction(const char* name);

/// Calls the real NCCL's `name` (a function returning ncclResult_t), or answers as
/// missingRealFunction where there is none.
#define GPUPEER_REAL_NCCL(name, ...)                                                                   \
  (::gpupeer::nccl_api::realNccl().name != nullptr ? ::gpupeer::nccl_api::realNccl().name(__VA_ARGS__) \
                                                   : ::gpupeer::nccl_api::missingRealFunction(#name))

/// At the top of every function this library handles itself: a call NCCL makes to its own
/// function goes straight back to it.
#define GPUPEER_NCCL_INTERNAL_CALL(name, ...)                           \
  do {                                                                  \
    if (::gpupeer::nccl_api::fromRealNccl(__builtin_return_address(0))) \
      return GPUPEER_REAL_NCCL(name __VA_OPT__(, ) __VA_ARGS__);        \
  } while (0)

}  // namespace gpupeer::nccl_api
