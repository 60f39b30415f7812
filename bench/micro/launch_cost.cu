// Host time per call of the pieces an eager operation is made of, on 1-2 GPUs: kernel launches
// (plain, with a 512-byte argument and programmatic dependent launch, from one thread to two
// GPUs, from two threads), the driver's pointer query, the capture query, device switches,
// and gpupeer's whole eager all-reduce of 8 bytes, of nothing (its checks alone) and its choice
// of algorithm. A measurement tool for bench/results, not part of the default build
// (`make gpupeer_launch_cost`).
//
// Each figure is the median over 30 windows of 200 calls; the GPUs are synchronised between
// windows so that no queue fills and the host's pace alone is timed.
#include <cuda.h>  // types of the driver's launch (the function comes through the runtime)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "cuda/driver_entry.hpp"
#include "gpupeer/communicator.hpp"

namespace {

constexpr int kWindows = 30;
constexpr int kCallsPerWindow = 200;

struct Big {
  const void* pointers[48];  // 384 bytes, like OneShotArgs' pointer arrays
  long words[16];
};

__global__ void emptyKernel(int) {}

__global__ void pdlKernel(Big b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
  if (b.words[0] == 12345 && threadIdx.x == 9999) *static_cast<int*>(const_cast<void*>(b.pointers[0])) = 1;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

double usNow() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median host us per call of `call` over the windows; `sync` runs between windows.
double timeCalls(const std::function<void()>& call, const std::function<void()>& sync) {
  std::vector<double> windows;
  for (int w = 0; w < kWindows + 2; ++w) {
    sync();
    const double t0 = usNow();
    for (int i = 0; i < kCallsPerWindow; ++i) call();
    const double t1 = usNow();
    if (w >= 2) windows.push_back((t1 - t0) / kCallsPerWindow);  // two warm-up windows
  }
  sync();
  std::sort(windows.begin(), windows.end());
  return windows[windows.size() / 2];
}

cudaError_t launchPdl(const Big& b, cudaStream_t s) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(32);
  config.stream = s;
  cudaLaunchAttribute early{};
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &early;
  config.numAttrs = 1;
  return cudaLaunchKernelEx(&config, pdlKernel, b);
}

// The driver's launch of pdlKernel on the current device (CUDA 12 ABI), to compare with the
// runtime's.
using LaunchExFn = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
LaunchExFn driverLaunch() {
  static LaunchExFn fn = gpupeer::driverEntryPoint<LaunchExFn>("cuLaunchKernelEx");
  return fn;
}

CUresult launchPdlDriver(CUfunction f, const Big& b, cudaStream_t s) {
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 32;
  config.blockDimY = config.blockDimZ = 1;
  config.hStream = reinterpret_cast<CUstream>(s);
  CUlaunchAttribute early{};
  early.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  early.value.programmaticStreamSerializationAllowed = 1;
  config.attrs = &early;
  config.numAttrs = 1;
  void* params[] = {const_cast<Big*>(&b)};
  return driverLaunch()(&config, f, params, nullptr);
}

// A second thread that runs `job` whenever `posted` moves, as gpupeer's launch pool does.
struct Helper {
  std::atomic<unsigned long> posted{0}, done{0};
  std::atomic<bool> stop{false};
  std::function<void()> job;
  std::thread thread;
  explicit Helper(int device) {
    thread = std::thread([this, device] {
      cudaSetDevice(device);
      unsigned long seen = 0;
      while (!stop.load()) {
        const unsigned long p = posted.load(std::memory_order_acquire);
        if (p == seen) {
          __builtin_ia32_pause();
          continue;
        }
        seen = p;
        job();
        done.store(seen, std::memory_order_release);
      }
    });
  }
  ~Helper() {
    stop = true;
    thread.join();
  }
  void run(const std::function<void()>& mine) {
    const unsigned long ticket = posted.load() + 1;
    posted.store(ticket, std::memory_order_release);
    mine();
    while (done.load(std::memory_order_acquire) != ticket) __builtin_ia32_pause();
  }
};

}  // namespace

int main() {
  int devices = 0;
  check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (devices < 1) {
    std::printf("no GPU visible\n");
    return 1;
  }
  const int peer = devices > 1 ? 1 : 0;
  cudaStream_t s0 = nullptr, s1 = nullptr;
  check(cudaSetDevice(peer), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), "stream");
  check(cudaSetDevice(0), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking), "stream");
  void* buf0 = nullptr;
  check(cudaMalloc(&buf0, 1 << 20), "cudaMalloc");
  Big big{};
  auto syncBoth = [&] {
    cudaSetDevice(peer);
    cudaStreamSynchronize(s1);
    cudaSetDevice(0);
    cudaStreamSynchronize(s0);
  };
  std::printf("%-44s %10s\n", "what (host us per call, median of 30 windows)", "us");
  auto report = [](const char* what, double us) { std::printf("%-44s %10.3f\n", what, us); };

  report("launch: 512-byte argument, early launch", timeCalls([&] { launchPdl(big, s0); }, syncBoth));
  report("launch: empty kernel, 4-byte argument", timeCalls([&] { emptyKernel<<<1, 32, 0, s0>>>(1); }, syncBoth));
  report("launch: 512-byte argument, early launch", timeCalls([&] { launchPdl(big, s0); }, syncBoth));
  cudaFunction_t f0 = nullptr, f1 = nullptr;
  check(cudaGetFuncBySymbol(&f0, reinterpret_cast<const void*>(pdlKernel)), "cudaGetFuncBySymbol");
  cudaSetDevice(peer);
  check(cudaGetFuncBySymbol(&f1, reinterpret_cast<const void*>(pdlKernel)), "cudaGetFuncBySymbol");
  cudaSetDevice(0);
  if (driverLaunch())
    report("driver launch: 512-byte argument, early",
           timeCalls([&] { launchPdlDriver(reinterpret_cast<CUfunction>(f0), big, s0); }, syncBoth));
  report("launch: two GPUs from one thread", timeCalls(
                                                 [&] {
                                                   cudaSetDevice(0);
                                                   launchPdl(big, s0);
                                                   cudaSetDevice(peer);
                                                   launchPdl(big, s1);
                                                 },
                                                 syncBoth));
  {
    Helper helper(peer);
    helper.job = [&] { launchPdl(big, s1); };
    cudaSetDevice(0);
    report("launch: two GPUs from two threads", timeCalls([&] { helper.run([&] { launchPdl(big, s0); }); }, syncBoth));
    if (driverLaunch()) {
      helper.job = [&] { launchPdlDriver(reinterpret_cast<CUfunction>(f1), big, s1); };
      report("driver launch: two GPUs from two threads",
             timeCalls([&] { helper.run([&] { launchPdlDriver(reinterpret_cast<CUfunction>(f0), big, s0); }); },
                       syncBoth));
    }
    helper.job = [] {};
    report("handoff to a spinning thread, no launch", timeCalls([&] { helper.run([] {}); }, syncBoth));
  }
  cudaSetDevice(0);
  using PointerAttributesFn = int (*)(unsigned, const int*, void**, unsigned long long);
  if (auto query = gpupeer::driverEntryPoint<PointerAttributesFn>("cuPointerGetAttributes")) {
    report("cuPointerGetAttributes, 5 attributes", timeCalls(
                                                       [&] {
                                                         const int kAttributes[] = {2, 9, 11, 12, 10};
                                                         unsigned type = 0;
                                                         int ordinal = 0, legacy = 0;
                                                         unsigned long long start = 0;
                                                         std::size_t size = 0;
                                                         void* values[] = {&type, &ordinal, &start, &size, &legacy};
                                                         query(5, kAttributes, values,
                                                               reinterpret_cast<unsigned long long>(buf0));
                                                       },
                                                       syncBoth));
  }
  report("cudaStreamIsCapturing", timeCalls(
                                      [&] {
                                        cudaStreamCaptureStatus st;
                                        cudaStreamIsCapturing(s0, &st);
                                      },
                                      syncBoth));
  report("cudaGetDevice + cudaSetDevice (same)", timeCalls(
                                                     [&] {
                                                       int d = 0;
                                                       cudaGetDevice(&d);
                                                       cudaSetDevice(d);
                                                     },
                                                     syncBoth));
  report("cudaSetDevice to the other GPU and back", timeCalls(
                                                        [&] {
                                                          cudaSetDevice(peer);
                                                          cudaSetDevice(0);
                                                        },
                                                        syncBoth));
  if (devices > 1) {
    void* buf1 = nullptr;
    void* out0 = nullptr;
    void* out1 = nullptr;
    check(cudaMalloc(&out0, 1 << 20), "cudaMalloc");
    cudaSetDevice(1);
    check(cudaMalloc(&buf1, 1 << 20), "cudaMalloc");
    check(cudaMalloc(&out1, 1 << 20), "cudaMalloc");
    cudaSetDevice(0);
    std::vector<const void*> send = {buf0, buf1};
    std::vector<void*> same = {buf0, buf1}, other = {out0, out1};
    std::vector<cudaStream_t> streams = {s0, s1};
    for (bool threads : {true, false}) {
      gpupeer::CommunicatorOptions options;
      options.launchThreads = threads;
      auto comm = gpupeer::Communicator::create({0, 1}, options);
      if (!comm.isOk()) {
        std::printf("communicator: %s\n", comm.status().message().c_str());
        return 1;
      }
      gpupeer::Communicator& c = *comm.value();
      const std::string suffix = threads ? "" : ", one thread";
      report(("gpupeer all-reduce 8 B in place" + suffix).c_str(),
             timeCalls(
                 [&] { (void)c.allReduce(send, same, 2, gpupeer::DataType::kFloat32, gpupeer::RedOp::kSum, streams); },
                 syncBoth));
      report(("gpupeer all-reduce 8 B out of place" + suffix).c_str(),
             timeCalls(
                 [&] { (void)c.allReduce(send, other, 2, gpupeer::DataType::kFloat32, gpupeer::RedOp::kSum, streams); },
                 syncBoth));
      // No elements: the request is copied and every buffer checked, then nothing is enqueued.
      report(("gpupeer all-reduce of nothing, out of place" + suffix).c_str(),
             timeCalls(
                 [&] { (void)c.allReduce(send, other, 0, gpupeer::DataType::kFloat32, gpupeer::RedOp::kSum, streams); },
                 syncBoth));
      report(("gpupeer algorithmFor" + suffix).c_str(),
             timeCalls([&] { (void)c.algorithmFor(gpupeer::CollOp::kAllReduce, 8, false); }, syncBoth));
      std::printf("barriers: %s\n", c.checkBarriers().isOk() ? "ok" : "timed out");
    }
  }
  return 0;
}
