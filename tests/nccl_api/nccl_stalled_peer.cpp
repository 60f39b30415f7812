// An NCCL program in which one rank never reaches a collective: one process drives every rank
// (ncclCommInitAll over the first two GPUs), rank 1's stream is held by a host function, and
// both ranks enqueue an all-reduce in one group. A library whose waits are bounded must then
// report the stall through ncclCommGetAsyncError within 30 s, while rank 1's stream is still
// held, as a watchdog (torch's) polls it; the program then releases the stream and aborts the
// communicators, which must not hang. NCCL alone waits for ever, so run this over such a
// library only. Exits 0 where the stall was reported, 1 where not, 2 on a setup failure.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "../gpu/stream_gate.hpp"

namespace {

using Clock = std::chrono::steady_clock;

bool cudaOk(cudaError_t e, const char* what) {
  if (e != cudaSuccess) std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(e));
  return e == cudaSuccess;
}

bool ncclOk(ncclResult_t r, const char* what) {
  if (r != ncclSuccess)
    std::fprintf(stderr, "%s failed: %s (%s)\n", what, ncclGetErrorString(r), ncclGetLastError(nullptr));
  return r == ncclSuccess;
}

}  // namespace

int main() {
  constexpr int kRanks = 2;
  constexpr std::size_t kCount = 1024;
  int devices = 0;
  if (!cudaOk(cudaGetDeviceCount(&devices), "cudaGetDeviceCount")) return 2;
  if (devices < kRanks) {
    std::fprintf(stderr, "needs %d GPUs, %d visible\n", kRanks, devices);
    return 2;
  }
  std::vector<ncclComm_t> comms(kRanks);
  const int gpus[kRanks] = {0, 1};
  if (!ncclOk(ncclCommInitAll(comms.data(), kRanks, gpus), "ncclCommInitAll")) return 2;
  std::vector<cudaStream_t> streams(kRanks);
  std::vector<float*> buffers(kRanks);
  for (int r = 0; r < kRanks; ++r) {
    if (!cudaOk(cudaSetDevice(r), "cudaSetDevice") ||
        !cudaOk(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking), "cudaStreamCreateWithFlags") ||
        !cudaOk(cudaMalloc(&buffers[r], kCount * sizeof(float)), "cudaMalloc") ||
        !cudaOk(cudaMemset(buffers[r], 0, kCount * sizeof(float)), "cudaMemset") ||
        !cudaOk(cudaDeviceSynchronize(), "cudaDeviceSynchronize"))
      return 2;
  }
  gpupeer::testing::StreamGate gate;
  if (!cudaOk(cudaSetDevice(1), "cudaSetDevice") || !cudaOk(gate.hold(streams[1]), "cudaLaunchHostFunc")) return 2;
  const auto start = Clock::now();
  bool enqueued = ncclOk(ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; r < kRanks; ++r)
    enqueued =
        enqueued && ncclOk(ncclAllReduce(buffers[r], buffers[r], kCount, ncclFloat32, ncclSum, comms[r], streams[r]),
                           "ncclAllReduce");
  enqueued = ncclOk(ncclGroupEnd(), "ncclGroupEnd") && enqueued;
  ncclResult_t reported = ncclSuccess;
  while (enqueued && reported == ncclSuccess && Clock::now() - start < std::chrono::seconds(30)) {
    if (!ncclOk(ncclCommGetAsyncError(comms[0], &reported), "ncclCommGetAsyncError")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  const bool held = !gate.open.load();
  gate.open = true;
  if (reported != ncclSuccess)
    std::printf("stall reported after %.1f s, rank 1's stream still held: %s: %s (%s)\n", waited, held ? "yes" : "no",
                ncclGetErrorString(reported), ncclGetLastError(comms[0]));
  else
    std::printf("stall not reported within %.1f s\n", waited);
  for (int r = 0; r < kRanks; ++r) {
    cudaSetDevice(r);
    cudaStreamSynchronize(streams[r]);
  }
  const auto aborting = Clock::now();
  for (ncclComm_t comm : comms) ncclOk(ncclCommAbort(comm), "ncclCommAbort");
  std::printf("aborted in %.1f s\n", std::chrono::duration<double>(Clock::now() - aborting).count());
  return reported != ncclSuccess && held ? 0 : 1;
}
