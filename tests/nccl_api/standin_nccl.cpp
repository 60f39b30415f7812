// A stand-in for the real NCCL in the tests of libgpupeer_nccl.so: every function of nccl.h
// records its name and its arguments' bits and answers success. The few that tell a
// communicator's size, rank and GPU answer 1, 0 and 0, so the library never starts gpupeer
// beside a stand-in communicator (one rank) and passes each call on.

#include <nccl.h>

// ncclResetDebugInit is deprecated in nccl.h but still part of it: it is exported (and tested) too.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "standin_record.hpp"

void recordStandinCall(const char* name, std::vector<std::uint64_t> arguments);

namespace {

std::vector<StandinCall>& calls() {
  static std::vector<StandinCall> recorded;
  return recorded;
}
std::mutex& callsLock() {  // the library calls from several threads (one per communicator started)
  static std::mutex lock;
  return lock;
}

struct Recorder {
  const char* name;
  template <typename... A>
  void operator()(A... args) const {
    recordStandinCall(name, {argumentBits(args)...});
  }
};

template <typename T>
T answer() {
  if constexpr (std::is_same_v<T, ncclResult_t>) return ncclSuccess;
  if constexpr (std::is_same_v<T, const char*>) return "stand-in";
}

}  // namespace

void recordStandinCall(const char* name, std::vector<std::uint64_t> arguments) {
  std::lock_guard guard(callsLock());
  calls().push_back({name, std::move(arguments)});
}

extern "C" {

const std::vector<StandinCall>* standinCalls() { return &calls(); }

#define NCCL_API_FN(ret, name, params, args) \
  __attribute__((weak)) ret name params {    \
    Recorder{#name} args;                    \
    return answer<ret>();                    \
  }
#include "nccl_api/nccl_functions.def"
#undef NCCL_API_FN

}  // extern "C"
