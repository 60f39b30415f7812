// The only file that includes NVTX: the "gpupeer" domain and the push/pop behind NvtxRange.
#include "core/nvtx_range.hpp"

#include <nvtx3/nvToolsExt.h>

#include <cstdlib>

namespace gpupeer {
namespace {

nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t handle = nvtxDomainCreateA("gpupeer");
  return handle;
}

}  // namespace

bool nvtxToolAttached() {
  // NVTX v3 loads a tool only from this variable (or a library linked with the tool's symbol,
  // which gpupeer does not do), so reading it says whether any range would be recorded.
  static const bool attached = [] {
    const char* path = std::getenv("NVTX_INJECTION64_PATH");
    return path != nullptr && *path != '\0';
  }();
  return attached;
}

void NvtxRange::push(const std::string& name) {
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = name.c_str();  // copied by the tool during the call
  nvtxDomainRangePushEx(domain(), &attributes);
  pushed_ = true;
}

void NvtxRange::pop() { nvtxDomainRangePop(domain()); }

}  // namespace gpupeer
