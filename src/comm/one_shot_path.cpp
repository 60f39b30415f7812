// Host side of the one-shot algorithm: pieces no larger than a scratch slot, one kernel per
// rank and piece.
#include <algorithm>
#include <array>

#include "comm/communicator_impl.hpp"
#include "cuda/cuda_status.hpp"
#include "cuda/one_shot_kernels.cuh"

namespace gpupeer {
namespace {

struct LaunchContext {
  const Communicator::Impl* c;
  const CollRequest* q;
  const OneShotArgs* args;
};

Status launchRank(const void* context, int r) {
  const auto& x = *static_cast<const LaunchContext*>(context);
  const int d = x.c->devices[r];
  GPUPEER_CUDA_CHECK(d, cudaSetDevice(d));
  GPUPEER_CUDA_CHECK(d, launchOneShot(x.args[r], x.q->type, x.q->streams[r]));
  return Status::ok();
}

}  // namespace

Status runOneShot(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  const std::size_t es = dataTypeSize(q.type);
  const std::size_t slotElements = c.options.oneShotSlotBytes / es;
  const std::size_t inStride = collectiveInputElements(q.op, q.count, n) > q.count ? q.count : 0;
  const std::size_t outStride = collectiveOutputElements(q.op, q.count, n) > q.count ? q.count : 0;
  for (std::size_t done = 0; done < q.count; done += slotElements) {
    const std::size_t len = std::min(slotElements, q.count - done);
    std::array<OneShotArgs, kMaxCommRanks> args;  // no allocation per operation
    bool lines = true;
    for (int r = 0; r < n; ++r) {
      OneShotArgs& a = args[r];
      a.op = q.op;
      a.redop = q.redop;
      a.root = q.root;
      a.rank = r;
      a.ranks = n;
      a.in = static_cast<const char*>(q.send[r]) + done * es;
      a.out = static_cast<char*>(q.recv[r]) + done * es;
      a.inStride = inStride;
      a.outStride = outStride;
      a.len = len;
      for (int k = 0; k < n; ++k) {
        a.scratch[k] = c.ranks[k].scratch.get();
        a.flags[k] = static_cast<std::uint32_t*>(c.ranks[k].flags.get());
      }
      a.slotBytes = c.options.oneShotSlotBytes;
      for (int k = 0; k < n; ++k) a.llScratch[k] = c.ranks[k].lineScratch.get();
      a.llSlotBytes = c.lineSlotBytes;
      a.opCounter = c.counters(r);
      a.readers = c.counters(r) + 1;
      a.error = c.counters(r) + 2;
      a.earlyLaunch = c.ranks[r].hopperOrLater;
      a.maxBlocks = c.oneShotBlocks;
      a.stepBytes = c.oneShotStepBytes;
      lines = lines && oneShotAllowsLines(a, q.type);
    }
    for (OneShotArgs& a : args) a.lines = lines;
    LaunchContext context{&c, &q, args.data()};
    // Launch threads in eager use; inside a capture the calling thread launches everything
    // (the capture is then recorded in the order of the calls).
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (c.pool && cudaStreamIsCapturing(q.streams[0], &capturing) == cudaSuccess &&
        capturing == cudaStreamCaptureStatusNone) {
      GPUPEER_RETURN_IF_ERROR(c.pool->runAll(launchRank, &context));
    } else {
      (void)cudaGetLastError();
      for (int r = 0; r < n; ++r) GPUPEER_RETURN_IF_ERROR(launchRank(&context, r));
    }
  }
  return Status::ok();
}

}  // namespace gpupeer
