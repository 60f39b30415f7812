#include "nccl_api/comm_state.hpp"

#include <functional>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "cuda/device_guard.hpp"
#include "nccl_api/real_nccl.hpp"

namespace gpupeer::nccl_api {
namespace {

// Calls from every thread read it; only init and destroy write it.
std::shared_mutex& tableLock() {
  static std::shared_mutex lock;
  return lock;
}
std::unordered_map<ncclComm_t, std::shared_ptr<CommState>>& table() {
  static auto* states = new std::unordered_map<ncclComm_t, std::shared_ptr<CommState>>();  // outlives exit
  return *states;
}

}  // namespace

CommState::~CommState() {
  gpupeer.reset();
  if (exchangeStream != nullptr) {
    DeviceGuard guard;
    cudaSetDevice(device);
    cudaStreamDestroy(exchangeStream);
  }
}

void endSplits(CommState::AcrossHosts& parts, bool abort) {
  parts.inside.reset();
  for (ncclComm_t& c : {std::ref(parts.insideComm), std::ref(parts.across)}) {
    if (c != nullptr) (void)(abort ? GPUPEER_REAL_NCCL(ncclCommAbort, c) : GPUPEER_REAL_NCCL(ncclCommDestroy, c));
    c = nullptr;
  }
}

void addComm(std::shared_ptr<CommState> state) {
  std::unique_lock lock(tableLock());
  table()[state->real] = std::move(state);
}

std::shared_ptr<CommState> findComm(ncclComm_t comm) {
  std::shared_lock lock(tableLock());
  auto it = table().find(comm);
  return it == table().end() ? nullptr : it->second;
}

std::shared_ptr<CommState> removeComm(ncclComm_t comm) {
  std::unique_lock lock(tableLock());
  auto it = table().find(comm);
  if (it == table().end()) return nullptr;
  std::shared_ptr<CommState> state = std::move(it->second);
  table().erase(it);
  return state;
}

}  // namespace gpupeer::nccl_api
