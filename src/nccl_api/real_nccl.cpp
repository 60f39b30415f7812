// Finding the real NCCL. Under LD_PRELOAD the program has usually loaded its own libnccl.so.2
// already (torch links it): RTLD_NEXT finds its functions after ours, which is the library the
// program would have used without gpupeer. A library that opens NCCL itself by path (vLLM's
// VLLM_NCCL_SO_PATH, CuPy) loads this one instead and nothing else: then the loader's search
// for libnccl.so.2 is tried, skipping any file that is this library (users may name it so).

#include "nccl_api/real_nccl.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <vector>

#include "nccl_api/debug_log.hpp"

namespace gpupeer::nccl_api {
namespace {

std::string fileOfSymbol(void* symbol) {
  Dl_info info{};
  if (symbol == nullptr || dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  std::filesystem::path p = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::string(info.dli_fname) : p.string();
}

// The file this library was loaded from, to tell it apart from the real NCCL.
std::string ownFile() { return fileOfSymbol(reinterpret_cast<void*>(&realNccl)); }

// A handle on `file` whose ncclGetVersion is not ours, or null.
void* openIfNotOurs(const std::string& file, const std::string& own) {
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return nullptr;
  if (fileOfSymbol(dlsym(handle, "ncclGetVersion")) == own) {
    dlclose(handle);
    return nullptr;
  }
  return handle;
}

void* findReal(RealNccl& real) {
  const std::string own = ownFile();
  if (const char* path = std::getenv("GPUPEER_NCCL_REAL_LIBRARY"); path != nullptr && *path != '\0') {
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      real.problem = fmt::format("GPUPEER_NCCL_REAL_LIBRARY={} cannot be opened: {}", path, dlerror());
      return nullptr;
    }
    if (fileOfSymbol(dlsym(handle, "ncclGetVersion")) == own) {
      real.problem = fmt::format("GPUPEER_NCCL_REAL_LIBRARY={} is libgpupeer_nccl.so itself, not NCCL", path);
      dlclose(handle);
      return nullptr;
    }
    real.path = path;
    return handle;
  }
  if (void* next = dlsym(RTLD_NEXT, "ncclGetVersion"); next != nullptr) {
    std::string file = fileOfSymbol(next);
    if (!file.empty() && file != own) {
      // Already loaded: this only takes a reference.
      if (void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD); handle != nullptr) {
        real.path = file;
        return handle;
      }
    }
  }
  if (void* handle = openIfNotOurs("libnccl.so.2", own); handle != nullptr) {
    real.path = fileOfSymbol(dlsym(handle, "ncclGetVersion"));
    return handle;
  }
  std::vector<std::string> folders;
  if (const char* llp = std::getenv("LD_LIBRARY_PATH"); llp != nullptr) {
    std::string all = llp;
    for (std::size_t start = 0; start <= all.size();) {
      std::size_t end = all.find(':', start);
      if (end == std::string::npos) end = all.size();
      if (end > start) folders.push_back(all.substr(start, end - start));
      start = end + 1;
    }
  }
  for (const char* f : {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64",
                        "/usr/local/cuda/lib64", "/usr/local/lib"})
    folders.emplace_back(f);
  for (const std::string& folder : folders) {
    const std::string file = folder + "/libnccl.so.2";
    if (!std::filesystem::exists(file)) continue;
    if (void* handle = openIfNotOurs(file, own); handle != nullptr) {
      real.path = file;
      return handle;
    }
  }
  real.problem =
      "no NCCL library found besides libgpupeer_nccl.so (looked for libnccl.so.2 in the process, the loader's path, "
      "LD_LIBRARY_PATH and the usual folders): set GPUPEER_NCCL_REAL_LIBRARY=/path/to/libnccl.so.2";
  return nullptr;
}

// The real NCCL's loaded segments, for fromRealNccl.
struct Segment {
  std::uintptr_t begin, end;
};
std::vector<Segment>& realSegments() {
  static std::vector<Segment> segments;
  return segments;
}

void findSegments(void* symbol) {
  Dl_info info{};
  if (symbol == nullptr || dladdr(symbol, &info) == 0) return;
  struct Search {
    std::uintptr_t base;
    std::vector<Segment>* out;
  } search{reinterpret_cast<std::uintptr_t>(info.dli_fbase), &realSegments()};
  dl_iterate_phdr(
      [](dl_phdr_info* object, std::size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        bool mine = false;
        for (int i = 0; i < object->dlpi_phnum; ++i) {
          const ElfW(Phdr)& p = object->dlpi_phdr[i];
          if (p.p_type != PT_LOAD) continue;
          const std::uintptr_t begin = object->dlpi_addr + p.p_vaddr;
          if (begin <= s->base && s->base < begin + p.p_memsz) mine = true;
        }
        if (!mine) return 0;
        for (int i = 0; i < object->dlpi_phnum; ++i) {
          const ElfW(Phdr)& p = object->dlpi_phdr[i];
          if (p.p_type == PT_LOAD)
            s->out->push_back({object->dlpi_addr + p.p_vaddr, object->dlpi_addr + p.p_vaddr + p.p_memsz});
        }
        return 1;
      },
      &search);
}

}  // namespace

bool fromRealNccl(const void* returnAddress) {
  realNccl();  // the segments are found with the library
  const auto at = reinterpret_cast<std::uintptr_t>(returnAddress);
  for (const Segment& s : realSegments())
    if (s.begin <= at && at < s.end) return true;
  return false;
}

const RealNccl& realNccl() {
  static RealNccl real;
  static std::once_flag once;
  std::call_once(once, [] {
    void* handle = findReal(real);
    if (handle == nullptr) {
      logWarn("{}", real.problem);
      return;
    }
#define NCCL_API_FN(ret, name, params, args) real.name = reinterpret_cast<ret(*) params>(dlsym(handle, #name));
#include "nccl_api/nccl_functions.def"
#undef NCCL_API_FN
    if (real.ncclGetVersion == nullptr) {
      real.problem = fmt::format("{} has no ncclGetVersion: not an NCCL library", real.path);
      logWarn("{}", real.problem);
      return;
    }
    findSegments(reinterpret_cast<void*>(real.ncclGetVersion));
    int version = 0;
    real.ncclGetVersion(&version);
    logInfo("NCCL calls gpupeer does not take go to {} (NCCL {})", real.path, version);
  });
  return real;
}

ncclResult_t missingRealFunction(const char* name) {
  const RealNccl& real = realNccl();
  if (real.loaded())
    logWarn("{} has no {} (an older NCCL): the call fails with ncclSystemError", real.path, name);
  else
    logWarn("{} fails with ncclSystemError: {}", name, real.problem);
  return ncclSystemError;
}

}  // namespace gpupeer::nccl_api
