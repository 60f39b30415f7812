// A minimal NVTX tool for tests: loaded by NVTX through NVTX_INJECTION64_PATH, as Nsight
// Systems' own tool is, it appends "domain NAME", "push DOMAIN NAME" and "pop DOMAIN" lines to
// the file named by NVTX_RECORDER_OUT, so a test can see which ranges gpupeer opened.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace {

std::mutex mutex;  // ranges may be pushed from several threads

void record(const char* what, const char* domain, const char* name) {
  std::lock_guard<std::mutex> lock(mutex);
  const char* path = std::getenv("NVTX_RECORDER_OUT");
  if (!path) return;
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s %s%s%s\n", what, domain, name ? " " : "", name ? name : "");
    std::fclose(f);
  }
}

// A domain handle is the domain's name, kept for the process.
nvtxDomainHandle_t NVTX_API domainCreate(const char* name) {
  record("domain", name, nullptr);
  return reinterpret_cast<nvtxDomainHandle_t>(strdup(name));
}

int NVTX_API domainPush(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  const char* name = attributes && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII ? attributes->message.ascii : "?";
  record("push", domain ? reinterpret_cast<const char*>(domain) : "(default)", name);
  return 0;
}

int NVTX_API domainPop(nvtxDomainHandle_t domain) {
  record("pop", domain ? reinterpret_cast<const char*>(domain) : "(default)", nullptr);
  return 0;
}

}  // namespace

// NVTX calls this once, at the first NVTX call of the process; 1 means the tool is attached.
extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getTable) {
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(getTable(NVTX_ETID_CALLBACKS));
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size)) return 0;
  if (size <= NVTX_CBID_CORE2_DomainCreateA) return 0;
  *table[NVTX_CBID_CORE2_DomainCreateA] = reinterpret_cast<NvtxFunctionPointer>(&domainCreate);
  *table[NVTX_CBID_CORE2_DomainRangePushEx] = reinterpret_cast<NvtxFunctionPointer>(&domainPush);
  *table[NVTX_CBID_CORE2_DomainRangePop] = reinterpret_cast<NvtxFunctionPointer>(&domainPop);
  return 1;
}
