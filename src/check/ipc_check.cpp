// The cross-process check: this process exports a cudaMalloc buffer (cudaIpcGetMemHandle) and a
// cuMem allocation (POSIX file descriptor); a second process imports both, checks the pattern,
// writes its own, and this process checks that. The second process is this program started again
// with GPUPEER_IPC_CHECK_CHILD set (and, where gpupeer is a shared library that the program
// loaded, that library in LD_PRELOAD), which answerAsIpcChild below catches before main(): CUDA
// cannot be used in a child forked after the parent has used it, and starting a program of our
// own would need it installed beside every binary that links gpupeer. The child uses the driver
// API through libcuda.so.1 only (plain C, safe before C++ static initialisation is over). Both
// roles stay in this one file: a static library's object, and so its constructor, is linked into
// a program only when something in it is used (here runIpcCheck).
#include "gpupeer/ipc_check.hpp"

#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "check/ipc_protocol.hpp"
#include "core/fd_passing.hpp"
#include "cuda/cuda_status.hpp"
#include "cuda/vmm_memory.hpp"
#include "gpupeer/pattern.hpp"

extern char** environ;

namespace gpupeer {
namespace {

using namespace ipcproto;
static_assert(kIpcHandleBytes == CU_IPC_HANDLE_SIZE && sizeof(cudaIpcMemHandle_t) == kIpcHandleBytes);

void set(MechanismAnswer& a, CheckOutcome o, const char* kb, const char* format, ...)
    __attribute__((format(printf, 4, 5)));
void set(MechanismAnswer& a, CheckOutcome o, const char* kb, const char* format, ...) {
  a.outcome = static_cast<std::int32_t>(o);
  std::snprintf(a.kbId, sizeof a.kbId, "%s", kb);
  va_list args;
  va_start(args, format);
  std::vsnprintf(a.detail, sizeof a.detail, format, args);
  va_end(args);
}

// ---- the second process ---------------------------------------------------------------------

// The driver functions the child uses, by the names libcuda exports (cuda.h maps the plain names
// to their current versions, e.g. cuIpcOpenMemHandle -> cuIpcOpenMemHandle_v2).
#define GPUPEER_NAME_OF(f) GPUPEER_STRING_OF(f)
#define GPUPEER_STRING_OF(f) #f
struct Driver {
  decltype(&cuInit) init = nullptr;
  decltype(&cuDeviceGetByPCIBusId) deviceByBusId = nullptr;
  decltype(&cuDevicePrimaryCtxRetain) retainContext = nullptr;
  decltype(&cuCtxSetCurrent) setContext = nullptr;
  decltype(&cuIpcOpenMemHandle) ipcOpen = nullptr;
  decltype(&cuIpcCloseMemHandle) ipcClose = nullptr;
  decltype(&cuMemcpyDtoH) toHost = nullptr;
  decltype(&cuMemcpyHtoD) toDevice = nullptr;
  decltype(&cuCtxSynchronize) synchronize = nullptr;
  decltype(&cuMemImportFromShareableHandle) import = nullptr;
  decltype(&cuMemAddressReserve) reserve = nullptr;
  decltype(&cuMemMap) map = nullptr;
  decltype(&cuMemSetAccess) setAccess = nullptr;
  decltype(&cuMemUnmap) unmap = nullptr;
  decltype(&cuMemAddressFree) addressFree = nullptr;
  decltype(&cuMemRelease) release = nullptr;
  decltype(&cuGetErrorName) errorName = nullptr;

  bool load() {
    void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    auto get = [lib](auto& f, const char* name) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(::dlsym(lib, name));
    };
    get(init, GPUPEER_NAME_OF(cuInit));
    get(deviceByBusId, GPUPEER_NAME_OF(cuDeviceGetByPCIBusId));
    get(retainContext, GPUPEER_NAME_OF(cuDevicePrimaryCtxRetain));
    get(setContext, GPUPEER_NAME_OF(cuCtxSetCurrent));
    get(ipcOpen, GPUPEER_NAME_OF(cuIpcOpenMemHandle));
    get(ipcClose, GPUPEER_NAME_OF(cuIpcCloseMemHandle));
    get(toHost, GPUPEER_NAME_OF(cuMemcpyDtoH));
    get(toDevice, GPUPEER_NAME_OF(cuMemcpyHtoD));
    get(synchronize, GPUPEER_NAME_OF(cuCtxSynchronize));
    get(import, GPUPEER_NAME_OF(cuMemImportFromShareableHandle));
    get(reserve, GPUPEER_NAME_OF(cuMemAddressReserve));
    get(map, GPUPEER_NAME_OF(cuMemMap));
    get(setAccess, GPUPEER_NAME_OF(cuMemSetAccess));
    get(unmap, GPUPEER_NAME_OF(cuMemUnmap));
    get(addressFree, GPUPEER_NAME_OF(cuMemAddressFree));
    get(release, GPUPEER_NAME_OF(cuMemRelease));
    get(errorName, GPUPEER_NAME_OF(cuGetErrorName));
    return init && deviceByBusId && retainContext && setContext && ipcOpen && ipcClose && toHost && toDevice &&
           synchronize && import && reserve && map && setAccess && unmap && addressFree && release && errorName;
  }
  const char* name(CUresult r) const {
    const char* n = nullptr;
    return errorName && errorName(r, &n) == CUDA_SUCCESS && n ? n : "CUDA_ERROR_UNKNOWN";
  }
};

// Reads the peer's bytes at `ptr`, checks them and writes this side's pattern there.
bool checkAndAnswer(const Driver& d, CUdeviceptr ptr, std::uint64_t seed, MechanismAnswer& a, const char* kb) {
  std::vector<unsigned char> host(kBytes);
  if (CUresult r = d.toHost(host.data(), ptr, kBytes); r != CUDA_SUCCESS) {
    set(a, CheckOutcome::kFail, kb, "cuMemcpyDtoH of the imported memory: %s", d.name(r));
    return false;
  }
  if (std::optional<Mismatch> m = findMismatch(host.data(), host.size(), seed)) {
    set(a, CheckOutcome::kFail, kb, "imported, but the bytes differ from the owner's from offset %lld",
        static_cast<long long>(m->offset));
    return false;
  }
  fillPattern(host.data(), host.size(), seed + 1);
  if (CUresult r = d.toDevice(ptr, host.data(), kBytes); r != CUDA_SUCCESS) {
    set(a, CheckOutcome::kFail, kb, "cuMemcpyHtoD into the imported memory: %s", d.name(r));
    return false;
  }
  // A copy from pageable memory returns once the bytes are staged, not written: without this
  // the owner may read the last chunks before they land.
  if (CUresult r = d.synchronize(); r != CUDA_SUCCESS) {
    set(a, CheckOutcome::kFail, kb, "cuCtxSynchronize after writing the imported memory: %s", d.name(r));
    return false;
  }
  return true;
}

void childCudaIpc(const Driver& d, const Request& q, MechanismAnswer& a) {
  CUipcMemHandle handle;
  std::memcpy(&handle, q.ipcHandle, sizeof handle);
  CUdeviceptr ptr = 0;
  if (CUresult r = d.ipcOpen(&ptr, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS); r != CUDA_SUCCESS) {
    set(a, CheckOutcome::kFail, "cuda/ipc-open-mem-handle-failed", "cudaIpcOpenMemHandle in the second process: %s",
        d.name(r));
    return;
  }
  if (checkAndAnswer(d, ptr, q.seed, a, "cuda/ipc-open-mem-handle-failed"))
    set(a, CheckOutcome::kPass, "", "%zu bytes checked in the second process and written back", kBytes);
  d.ipcClose(ptr);
}

// Imports the allocation behind `fd` on `dev`, checks it and writes back.
bool importAndCheck(const Driver& d, CUdevice dev, int fd, std::uint64_t seed, MechanismAnswer& a) {
  CUmemGenericAllocationHandle h{};
  if (CUresult r = d.import(&h, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd)),
                            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
      r != CUDA_SUCCESS) {
    set(a, CheckOutcome::kFail, "nccl/cumem-import-pidfd", "cuMemImportFromShareableHandle: %s", d.name(r));
    return false;
  }
  CUdeviceptr va = 0;
  bool ok = false;
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = dev;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (CUresult r = d.reserve(&va, kBytes, 0, 0, 0); r != CUDA_SUCCESS) {
    set(a, CheckOutcome::kFail, "nccl/cumem-import-pidfd", "cuMemAddressReserve: %s", d.name(r));
  } else if (CUresult r = d.map(va, kBytes, 0, h, 0); r != CUDA_SUCCESS) {
    set(a, CheckOutcome::kFail, "nccl/cumem-import-pidfd", "cuMemMap of the imported handle: %s", d.name(r));
  } else {
    if (CUresult r = d.setAccess(va, kBytes, &access, 1); r != CUDA_SUCCESS)
      set(a, CheckOutcome::kFail, "nccl/cumem-import-pidfd", "cuMemSetAccess: %s", d.name(r));
    else
      ok = checkAndAnswer(d, va, seed, a, "nccl/cumem-import-pidfd");
    d.unmap(va, kBytes);
  }
  if (va) d.addressFree(va, kBytes);
  d.release(h);
  return ok;
}

void childCuMem(const Driver& d, CUdevice dev, const Request& q, int socketFd, MechanismAnswer& a) {
  if (q.cumemFd < 0) return;  // the parent could not export one; it reports why
  // NCCL takes the owner's descriptor with pidfd_getfd; Unix-socket passing is the fallback
  // that works under any ptrace scope, checked too so the memory itself is proven either way.
  fdpass::TakenFd taken = fdpass::takeFdFrom(q.parentPid, q.cumemFd);
  if (taken.fd >= 0) {
    if (importAndCheck(d, dev, taken.fd, q.seed, a))
      set(a, CheckOutcome::kPass, "", "descriptor taken with pidfd_getfd; %zu bytes checked and written back", kBytes);
    ::close(taken.fd);
    if (socketFd >= 0) ::close(socketFd);
    return;
  }
  std::string why = fdpass::whyTakeFdFailed(taken.err, q.ptraceScope);
  bool overSocket = socketFd >= 0 && importAndCheck(d, dev, socketFd, q.seed, a);
  a.onlyPidfdRefused = overSocket;
  set(a, CheckOutcome::kFail, "nccl/cumem-import-pidfd", "%s: %s (%s)%s", taken.call, std::strerror(taken.err),
      why.c_str(),
      overSocket ? "; the same memory passed over a Unix socket (SCM_RIGHTS) imports and checks fine" : "");
  if (socketFd >= 0) ::close(socketFd);
}

int runChild(int sock) {
  Request q;
  int socketFd = -1;
  if (!fdpass::receiveWithFd(sock, &q, sizeof q, &socketFd, kAnswerTimeoutMs).isOk() || q.magic != kMagic) return 3;
  Answer ans;
  Driver d;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  CUresult r = CUDA_ERROR_NOT_INITIALIZED;
  if (!d.load()) {
    for (MechanismAnswer& m : ans.mechanism)
      set(m, CheckOutcome::kFail, "driver/cuda-driver-too-old",
          "the second process cannot load libcuda.so.1's driver API");
  } else if ((r = d.init(0)) != CUDA_SUCCESS || (r = d.deviceByBusId(&dev, q.busId)) != CUDA_SUCCESS ||
             (r = d.retainContext(&ctx, dev)) != CUDA_SUCCESS || (r = d.setContext(ctx)) != CUDA_SUCCESS) {
    for (MechanismAnswer& m : ans.mechanism)
      set(m, CheckOutcome::kFail, "", "CUDA does not start in the second process: %s", d.name(r));
  } else {
    childCudaIpc(d, q, ans.mechanism[0]);
    childCuMem(d, dev, q, socketFd, ans.mechanism[1]);
    socketFd = -1;
  }
  if (socketFd >= 0) ::close(socketFd);
  return fdpass::sendWithFd(sock, &ans, sizeof ans, -1).isOk() ? 0 : 4;
}

// Before main(): the second process answers and exits; any other process goes on untouched.
__attribute__((constructor)) void answerAsIpcChild() {
  const char* v = std::getenv(kChildVariable);
  if (!v) return;
  ::_exit(runChild(std::atoi(v)));
}

// ---- this process ---------------------------------------------------------------------------

// How the second process reaches answerAsIpcChild: "" where the function is part of the program
// itself (/proc/self/exe: the gpupeer binary, a test), else the shared object that holds it (a
// program such as Python that loaded libgpupeer_c.so), which the program started again then loads
// before its main() through LD_PRELOAD. Read from /proc/self/maps: the file mapped where the
// function lies.
Result<std::string> childPreload() {
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return GPUPEER_ERROR(ErrorCode::kSystem, std::string("readlink /proc/self/exe: ") + std::strerror(errno));
  exe[n] = 0;
  auto at = reinterpret_cast<std::uintptr_t>(&answerAsIpcChild);
  FILE* maps = std::fopen("/proc/self/maps", "r");
  if (!maps) return GPUPEER_ERROR(ErrorCode::kSystem, std::string("/proc/self/maps: ") + std::strerror(errno));
  char line[4608];
  std::string file;
  while (std::fgets(line, sizeof line, maps)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line, "%lx-%lx", &lo, &hi) != 2 || at < lo || at >= hi) continue;
    if (const char* path = std::strchr(line, '/')) file = path;
    while (!file.empty() && (file.back() == '\n' || file.back() == ' ')) file.pop_back();
    break;
  }
  std::fclose(maps);
  if (file == exe) return std::string();
  // LD_PRELOAD splits at colons and spaces; a deleted file shows as "path (deleted)".
  if (file.empty() || file.find_first_of(": ") != std::string::npos)
    return GPUPEER_ERROR(ErrorCode::kUnsupported,
                         "the cross-process check starts this program again, and the shared library that answers "
                         "as the second process ('" +
                             file + "') cannot be loaded into it by name; run `gpupeer check --ipc`");
  return file;
}

// A cuMem allocation of kBytes exportable as a POSIX descriptor (the mechanism registered
// user buffers use: cuda/vmm_memory.hpp), mapped here, and its descriptor.
struct VmmBuffer {
  std::unique_ptr<vmm::ShareableAllocation> memory;
  UniqueFd fd;
  // Why it could not be made ("" when it was).
  std::string create(int device) {
    Result<std::unique_ptr<vmm::ShareableAllocation>> made = vmm::ShareableAllocation::create(device, kBytes);
    if (!made.isOk()) return made.status().message();
    memory = std::move(made.value());
    Result<std::vector<vmm::ExportedSegment>> exported = vmm::exportSegments(device, memory->get(), kBytes);
    if (!exported.isOk()) return exported.status().message();
    fd = std::move(exported.value().front().fd);
    return "";
  }
  void* pointer() const { return memory ? memory->get() : nullptr; }
};

// Starts this program again as the second process, with `childSock` as its end of the socket and
// `preload` (childPreload) put first in LD_PRELOAD.
Result<pid_t> startChild(int childSock, const std::string& preload) {
  static const char kPreload[] = "LD_PRELOAD=";
  std::vector<std::string> env;
  std::string preloads = preload;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, kChildVariable, std::strlen(kChildVariable)) == 0) continue;
    if (!preload.empty() && std::strncmp(*e, kPreload, sizeof kPreload - 1) == 0) {
      if ((*e)[sizeof kPreload - 1] != 0) preloads += std::string(":") + (*e + sizeof kPreload - 1);
      continue;
    }
    env.push_back(*e);
  }
  env.push_back(std::string(kChildVariable) + "=" + std::to_string(childSock));
  if (!preload.empty()) env.push_back(kPreload + preloads);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  char arg0[] = "gpupeer-ipc-check";
  char* argv[] = {arg0, nullptr};
  pid_t pid = ::fork();
  if (pid < 0) return GPUPEER_ERROR(ErrorCode::kSystem, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::execve("/proc/self/exe", argv, envp.data());
    ::_exit(127);
  }
  return pid;
}

// This side's check of what the second process wrote.
void checkWriteBack(void* ptr, std::uint64_t seed, IpcMechanismResult& r) {
  std::vector<unsigned char> host(kBytes);
  if (cudaMemcpy(host.data(), ptr, kBytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
    (void)cudaGetLastError();
    r.outcome = CheckOutcome::kFail;
    r.detail = "reading back what the second process wrote failed";
    return;
  }
  if (std::optional<Mismatch> m = findMismatch(host.data(), host.size(), seed + 1)) {
    r.outcome = CheckOutcome::kFail;
    r.detail =
        "the second process's writes did not arrive (first difference at offset " + std::to_string(m->offset) + ")";
  }
}

}  // namespace

Result<IpcCheckReport> runIpcCheck(const Snapshot& s, int device) {
  const Gpu* gpu = s.findGpu(device);
  if (!gpu) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "GPU " + std::to_string(device) + " is not visible");
  Result<std::string> preload = childPreload();
  if (!preload.isOk()) return preload.status();
  IpcCheckReport report;
  report.device = device;
  report.busId = gpu->pciBusId;
  report.obstacles = ipcObstacles(s);
  Request q;
  q.parentPid = ::getpid();
  q.ptraceScope = s.platform.ptraceScope.valueOr(-1);
  q.seed = static_cast<std::uint64_t>(::getpid()) * 7919u;
  std::snprintf(q.busId, sizeof q.busId, "%s", gpu->pciBusId.c_str());

  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  std::vector<unsigned char> pattern(kBytes);
  fillPattern(pattern.data(), pattern.size(), q.seed);
  void* plain = nullptr;
  GPUPEER_CUDA_CHECK(device, cudaMalloc(&plain, kBytes));
  std::unique_ptr<void, void (*)(void*)> plainGuard(plain, [](void* p) { (void)cudaFree(p); });
  GPUPEER_CUDA_CHECK(device, cudaMemcpy(plain, pattern.data(), kBytes, cudaMemcpyHostToDevice));
  cudaIpcMemHandle_t handle;
  GPUPEER_CUDA_CHECK(device, cudaIpcGetMemHandle(&handle, plain));
  std::memcpy(q.ipcHandle, &handle, sizeof q.ipcHandle);

  IpcMechanismResult cudaIpc{IpcMechanism::kCudaIpc, CheckOutcome::kSkip, "", ""};
  IpcMechanismResult cuMem{IpcMechanism::kCuMemPosixFd, CheckOutcome::kSkip, "", ""};
  VmmBuffer vmm;
  std::string vmmProblem = vmm.create(device), vmmNote;
  if (vmmProblem.empty()) {
    GPUPEER_CUDA_CHECK(device, cudaMemcpy(vmm.pointer(), pattern.data(), kBytes, cudaMemcpyHostToDevice));
    q.cumemFd = vmm.fd.get();
    // The memory type matters: cudaIpcGetMemHandle refuses cuMem allocations, which travel only
    // as file descriptors (or fabric handles); said in the report, since code that hands such a
    // buffer to cudaIpc fails that way.
    cudaIpcMemHandle_t refused;
    if (cudaError_t e = cudaIpcGetMemHandle(&refused, vmm.pointer()); e != cudaSuccess) {
      (void)cudaGetLastError();
      vmmNote = std::string("; cudaIpcGetMemHandle refuses this cuMem memory (") + cudaGetErrorName(e) +
                "): such buffers can only be shared as descriptors";
    }
  } else {
    cuMem.detail = "no cuMem buffer to share: " + vmmProblem;
  }

  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return GPUPEER_ERROR(ErrorCode::kSystem, std::string("socketpair: ") + std::strerror(errno));
  // The child's end must survive execve.
  int childEnd = ::fcntl(sv[1], F_DUPFD, 3);
  ::close(sv[1]);
  Result<pid_t> child = startChild(childEnd, preload.value());
  ::close(childEnd);
  if (!child.isOk()) {
    ::close(sv[0]);
    return child.status();
  }
  Status sent = fdpass::sendWithFd(sv[0], &q, sizeof q, q.cumemFd);
  Answer ans;
  int unused = -1;
  Status answered = sent.isOk() ? fdpass::receiveWithFd(sv[0], &ans, sizeof ans, &unused, kAnswerTimeoutMs) : sent;
  ::close(sv[0]);
  if (!answered.isOk()) ::kill(child.value(), SIGKILL);
  int wstatus = 0;
  ::waitpid(child.value(), &wstatus, 0);
  if (!answered.isOk() || ans.magic != kMagic)
    return GPUPEER_ERROR(
        ErrorCode::kSystem,
        "the second process gave no answer (" + answered.message() +
            (WIFEXITED(wstatus) ? "; exit " + std::to_string(WEXITSTATUS(wstatus)) : std::string("; killed")) + ")");
  IpcMechanismResult* mine[2] = {&cudaIpc, &cuMem};
  void* pointers[2] = {plain, vmm.pointer()};
  for (int i = 0; i < 2; ++i) {
    if (i == 1 && !vmmProblem.empty()) continue;
    const MechanismAnswer& a = ans.mechanism[i];
    mine[i]->outcome = static_cast<CheckOutcome>(a.outcome);
    mine[i]->detail = a.detail;
    mine[i]->kbId = a.kbId;
    mine[i]->onlyPidfdRefused = a.onlyPidfdRefused != 0;
    if (mine[i]->outcome == CheckOutcome::kPass) checkWriteBack(pointers[i], q.seed, *mine[i]);
  }
  cuMem.detail += vmmNote;  // set only where the cuMem memory was made
  report.results = {cudaIpc, cuMem};
  return report;
}

}  // namespace gpupeer
