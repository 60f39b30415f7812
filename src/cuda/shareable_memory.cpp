#include "gpupeer/shareable_memory.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>

#include "cuda/device_guard.hpp"
#include "cuda/vmm_memory.hpp"

namespace gpupeer {
namespace {

// Every live allocation by its pointer: frees may come from any thread (PyTorch's allocator).
struct Live {
  std::mutex lock;
  std::map<void*, std::unique_ptr<vmm::ShareableAllocation>> byPointer;
};

Live& live() {
  static Live* l = new Live;  // never destroyed: frees may come during exit
  return *l;
}

}  // namespace

Result<void*> allocateShareable(int device, std::size_t bytes) {
  Result<std::unique_ptr<vmm::ShareableAllocation>> made = vmm::ShareableAllocation::create(device, bytes);
  if (!made.isOk()) return made.status();
  void* p = made.value()->get();
  Live& l = live();
  std::lock_guard<std::mutex> hold(l.lock);
  l.byPointer[p] = std::move(made.value());
  return p;
}

Status freeShareable(void* ptr) {
  std::unique_ptr<vmm::ShareableAllocation> gone;
  {
    Live& l = live();
    std::lock_guard<std::mutex> hold(l.lock);
    auto it = l.byPointer.find(ptr);
    if (it == l.byPointer.end())
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("{} was not allocated by allocateShareable (or was freed already)", ptr));
    gone = std::move(it->second);
    l.byPointer.erase(it);
  }
  // As cudaFree does: work still queued on the memory finishes before it is unmapped.
  DeviceGuard guard;
  cudaSetDevice(gone->device());
  cudaDeviceSynchronize();
  (void)cudaGetLastError();
  return Status::ok();  // unmapped and released as `gone` goes
}

}  // namespace gpupeer
