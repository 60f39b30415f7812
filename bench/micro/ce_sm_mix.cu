// Whether copy engines and SM copies together move more over one NVLink connection than the
// copy engines alone (~396 GB/s per direction on 2x H200, ~391 with both directions busy;
// SMs ~370 and ~365). Each case copies `bytes` from GPU0 to GPU1 (and, bidirectional, GPU1 to
// GPU0 at the same time): a share by cudaMemcpyPeerAsync on one stream, the rest by gpupeer's SM
// copy (launchSmCopy, run on the source GPU: stores into the peer, or on the destination: loads)
// on another, both started by one event and joined by events. Data is not checked: a
// measurement tool for bench/results, not part of the default build (`make gpupeer_ce_sm_mix`).
//
// Usage: gpupeer_ce_sm_mix [MiB per direction, default 512]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda/copy_kernels.cuh"

namespace {

constexpr int kReps = 7;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

struct Side {
  int device = 0, peer = 1;
  void* src = nullptr;  // on device
  void* dst = nullptr;  // on peer
  cudaStream_t ce = nullptr, sm = nullptr, control = nullptr;
  cudaEvent_t start = nullptr, ceDone = nullptr, smDone = nullptr, t0 = nullptr, t1 = nullptr;
  cudaStream_t pullStream = nullptr;  // on peer: the destination's SMs load
  cudaEvent_t pullDone = nullptr;     // on peer
};

Side makeSide(int device, int peer, std::size_t bytes) {
  Side s;
  s.device = device;
  s.peer = peer;
  check(cudaSetDevice(peer), "set peer");
  check(cudaMalloc(&s.dst, bytes), "malloc dst");
  check(cudaMemset(s.dst, 0, bytes), "memset dst");
  check(cudaStreamCreateWithFlags(&s.pullStream, cudaStreamNonBlocking), "stream");
  check(cudaEventCreateWithFlags(&s.pullDone, cudaEventDisableTiming), "event");
  check(cudaSetDevice(device), "set device");
  check(cudaMalloc(&s.src, bytes), "malloc src");
  check(cudaMemset(s.src, 1, bytes), "memset src");
  for (cudaStream_t* st : {&s.ce, &s.sm, &s.control})
    check(cudaStreamCreateWithFlags(st, cudaStreamNonBlocking), "stream");
  for (cudaEvent_t* e : {&s.start, &s.ceDone, &s.smDone})
    check(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "event");
  check(cudaEventCreate(&s.t0), "event");
  check(cudaEventCreate(&s.t1), "event");
  return s;
}

// Enqueues one copy of `bytes` on side s: the first ceBytes by copy engine, the rest by SMs of
// the source GPU (push) or of the destination GPU (pull), `blocks` blocks (0: the default grid).
void enqueue(Side& s, std::size_t bytes, std::size_t ceBytes, bool pull, int blocks) {
  check(cudaSetDevice(s.device), "set");
  check(cudaEventRecord(s.t0, s.control), "t0");
  check(cudaEventRecord(s.start, s.control), "start");
  check(cudaStreamWaitEvent(s.ce, s.start, 0), "wait");
  check(cudaStreamWaitEvent(s.sm, s.start, 0), "wait");
  if (ceBytes) check(cudaMemcpyPeerAsync(s.dst, s.peer, s.src, s.device, ceBytes, s.ce), "ce copy");
  check(cudaEventRecord(s.ceDone, s.ce), "ce done");
  if (ceBytes < bytes) {
    char* d = static_cast<char*>(s.dst) + ceBytes;
    const char* from = static_cast<const char*>(s.src) + ceBytes;
    if (pull) {
      // The destination's SMs load from the source: their stream is on the peer and waits for
      // the start event of the source's control stream.
      check(cudaSetDevice(s.peer), "set peer");
      check(cudaStreamWaitEvent(s.pullStream, s.start, 0), "wait");
      check(gpupeer::launchSmCopy(d, from, bytes - ceBytes, s.pullStream, blocks), "sm pull");
      check(cudaEventRecord(s.pullDone, s.pullStream), "sm done");
      check(cudaSetDevice(s.device), "set");
      check(cudaStreamWaitEvent(s.sm, s.pullDone, 0), "wait");
      check(cudaEventRecord(s.smDone, s.sm), "sm done");
    } else {
      check(gpupeer::launchSmCopy(d, from, bytes - ceBytes, s.sm, blocks), "sm push");
      check(cudaEventRecord(s.smDone, s.sm), "sm done");
    }
  } else {
    check(cudaEventRecord(s.smDone, s.sm), "sm done");
  }
  check(cudaStreamWaitEvent(s.control, s.ceDone, 0), "join");
  check(cudaStreamWaitEvent(s.control, s.smDone, 0), "join");
  check(cudaEventRecord(s.t1, s.control), "t1");
}

// Median GB/s per direction over kReps (each direction's own start to its own end).
double measure(std::vector<Side>& sides, std::size_t bytes, double ceShare, bool pull, int blocks) {
  const std::size_t ceBytes = static_cast<std::size_t>(bytes * ceShare) / 4096 * 4096;
  std::vector<double> rates;
  for (int rep = 0; rep < kReps + 1; ++rep) {
    for (Side& s : sides) enqueue(s, bytes, ceBytes, pull, blocks);
    double slowest = 0;
    for (Side& s : sides) {
      check(cudaSetDevice(s.device), "set");
      check(cudaEventSynchronize(s.t1), "sync");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, s.t0, s.t1), "elapsed");
      slowest = std::max(slowest, static_cast<double>(ms));
    }
    if (rep > 0) rates.push_back(bytes / (slowest * 1e-3) / 1e9);  // the first is a warm-up
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 512;
  const std::size_t bytes = mib << 20;
  int count = 0;
  check(cudaGetDeviceCount(&count), "device count");
  if (count < 2) {
    std::printf("needs 2 GPUs, %d visible\n", count);
    return 1;
  }
  for (int d : {0, 1}) {
    check(cudaSetDevice(d), "set");
    check(cudaDeviceEnablePeerAccess(1 - d, 0), "peer access");
  }
  std::vector<Side> both = {makeSide(0, 1, bytes), makeSide(1, 0, bytes)};
  std::vector<Side> one = {both[0]};
  std::printf("%zu MiB per direction; GB/s per direction (median of %d; bidirectional: the slower direction)\n", mib,
              kReps);
  std::printf("%-44s %10s %10s\n", "case", "GPU0->1", "both ways");
  struct Case {
    const char* name;
    double ceShare;
    bool pull;
    int blocks;
  };
  const Case cases[] = {
      {"copy engine alone", 1.0, false, 0},
      {"SM push alone", 0.0, false, 0},
      {"SM pull alone", 0.0, true, 0},
      {"CE 90% + SM push 10%, 16 blocks", 0.9, false, 16},
      {"CE 90% + SM push 10%, all blocks", 0.9, false, 0},
      {"CE 80% + SM push 20%, 32 blocks", 0.8, false, 32},
      {"CE 80% + SM push 20%, all blocks", 0.8, false, 0},
      {"CE 70% + SM push 30%, all blocks", 0.7, false, 0},
      {"CE 50% + SM push 50%, all blocks", 0.5, false, 0},
      {"CE 90% + SM pull 10%, 16 blocks", 0.9, true, 16},
      {"CE 80% + SM pull 20%, 32 blocks", 0.8, true, 32},
      {"CE 80% + SM pull 20%, all blocks", 0.8, true, 0},
      {"CE 70% + SM pull 30%, all blocks", 0.7, true, 0},
      {"CE 50% + SM pull 50%, all blocks", 0.5, true, 0},
  };
  for (const Case& c : cases)
    std::printf("%-44s %10.1f %10.1f\n", c.name, measure(one, bytes, c.ceShare, c.pull, c.blocks),
                measure(both, bytes, c.ceShare, c.pull, c.blocks));
  return 0;
}
