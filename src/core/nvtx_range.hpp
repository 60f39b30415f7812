#pragma once
// Named NVTX ranges, so Nsight Systems shows gpupeer's collectives, copies and benchmark steps
// by name ("gpupeer all_reduce 64 MiB float sum"). NVTX v3 is header-only and does nothing
// until a tool injects itself (Nsight sets NVTX_INJECTION64_PATH in the process it starts); the
// name is only formatted when a tool is attached, so an untraced run pays one branch.

#include <fmt/format.h>

#include <string>
#include <utility>

namespace gpupeer {

/// Whether an NVTX tool is attached to this process (read once; safe from any thread).
bool nvtxToolAttached();

/// A push/pop range on the calling thread in the "gpupeer" NVTX domain, from construction to
/// destruction. Create and destroy it on one thread; not copyable.
class NvtxRange {
 public:
  template <class... Args>
  explicit NvtxRange(fmt::format_string<Args...> name, Args&&... args) {
    if (nvtxToolAttached()) push(fmt::format(name, std::forward<Args>(args)...));
  }
  ~NvtxRange() {
    if (pushed_) pop();
  }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

  /// Pushes `name` directly (used by the constructor; public for tests of the tool path).
  void push(const std::string& name);

 private:
  void pop();
  bool pushed_ = false;
};

}  // namespace gpupeer
