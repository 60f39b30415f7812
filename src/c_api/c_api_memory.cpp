// gpupeer_mem_alloc / gpupeer_mem_free: gpupeer/shareable_memory.hpp with the signatures of
// PyTorch's CUDAPluggableAllocator. Nothing may throw into the caller, and there is no error
// object to fill: a failure is said on standard error (PyTorch then raises its out-of-memory
// error, which does not know why).
#include <cstddef>
#include <cstdio>

#include "gpupeer/c_api.h"
#include "gpupeer/shareable_memory.hpp"

extern "C" {

void* gpupeer_mem_alloc(ptrdiff_t bytes, int device, void* /*stream*/) {
  try {
    if (bytes <= 0) {
      std::fprintf(stderr, "gpupeer_mem_alloc: %td bytes\n", bytes);
      return nullptr;
    }
    gpupeer::Result<void*> p = gpupeer::allocateShareable(device, static_cast<std::size_t>(bytes));
    if (p.isOk()) return p.value();
    std::fprintf(stderr, "gpupeer_mem_alloc: %td bytes on GPU%d: %s\n", bytes, device, p.status().message().c_str());
  } catch (...) {
    std::fprintf(stderr, "gpupeer_mem_alloc: out of host memory\n");
  }
  return nullptr;
}

void gpupeer_mem_free(void* ptr, ptrdiff_t /*bytes*/, int /*device*/, void* /*stream*/) {
  try {
    if (!ptr) return;
    gpupeer::Status st = gpupeer::freeShareable(ptr);
    if (!st.isOk()) std::fprintf(stderr, "gpupeer_mem_free: %s\n", st.message().c_str());
  } catch (...) {
    std::fprintf(stderr, "gpupeer_mem_free: out of host memory\n");
  }
}

}  // extern "C"
