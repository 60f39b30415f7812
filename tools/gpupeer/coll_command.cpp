// gpupeer coll: nccl-tests style table for gpupeer's collectives (all-reduce so far), each
// result checked against a host reference, with NCCL on the same buffers as the baseline.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "cli_common.hpp"
#include "gpupeer/bench.hpp"
#include "gpupeer/collective_reference.hpp"
#include "gpupeer/communicator.hpp"
#include "gpupeer/nccl_baseline.hpp"
#include "gpupeer/peer_check.hpp"

namespace gpupeer::cli {
namespace {

struct Options {
  std::string op = "all_reduce";
  std::string begin = "8", end = "128M", type = "float", redop = "sum", devices, baseline;
  double factor = 2;
  int gpus = 0, iters = 20, warmup = 5;
};

struct Rank {
  int device;
  void* send = nullptr;
  void* recv = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
};

using Launch = std::function<Status(const std::vector<const void*>&, const std::vector<void*>&)>;

// Mean time per operation of `iters` back-to-back operations (each reads the buffers the
// previous one wrote: no overlap of independent work), the slowest rank's clock.
Result<double> timeOps(std::vector<Rank>& ranks, const Launch& launch, const std::vector<const void*>& send,
                       const std::vector<void*>& recv, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) GPUPEER_RETURN_IF_ERROR(launch(send, recv));
  for (Rank& r : ranks) {
    cudaSetDevice(r.device);
    cudaEventRecord(r.start, r.stream);
  }
  for (int i = 0; i < iters; ++i) GPUPEER_RETURN_IF_ERROR(launch(send, recv));
  double worst = 0;
  for (Rank& r : ranks) {
    cudaSetDevice(r.device);
    cudaEventRecord(r.stop, r.stream);
  }
  for (Rank& r : ranks) {
    cudaSetDevice(r.device);
    if (cudaStreamSynchronize(r.stream) != cudaSuccess)
      return GPUPEER_ERROR(ErrorCode::kCuda,
                           fmt::format("GPU{}: {}", r.device, cudaGetErrorString(cudaGetLastError())));
    float ms = 0;
    cudaEventElapsedTime(&ms, r.start, r.stop);
    worst = std::max(worst, ms / 1000.0 / iters);
  }
  return worst;
}

// #wrong over every rank's result, counting also ranks whose bits differ from rank 0's.
std::size_t countWrong(std::vector<Rank>& ranks, const std::vector<std::vector<std::uint8_t>>& inputs, bool inPlace,
                       std::size_t count, DataType type, RedOp op) {
  std::vector<const void*> in;
  for (const auto& v : inputs) in.push_back(v.data());
  std::size_t bytes = count * dataTypeSize(type), wrong = 0;
  std::vector<std::uint8_t> first, got(bytes);
  for (Rank& r : ranks) {
    cudaSetDevice(r.device);
    cudaMemcpy(got.data(), inPlace ? r.send : r.recv, bytes, cudaMemcpyDeviceToHost);
    wrong += checkReduction(type, op, in, got.data(), count).wrong;
    if (first.empty())
      first = got;
    else if (first != got)
      ++wrong;
  }
  return wrong;
}

int run(const Options& o) {
  auto op = parseCollOp(o.op);
  auto type = parseDataType(o.type);
  auto redop = parseRedOp(o.redop);
  for (const Status& st : {op.status(), type.status(), redop.status()})
    if (!st.isOk()) return reportError(st);
  if (op.value() != CollOp::kAllReduce) {
    fmt::print(stderr, "gpupeer coll: only all_reduce exists so far\n");
    return kExitUsage;
  }
  if (Status st = checkRedOpForType(redop.value(), type.value()); !st.isOk()) return reportError(st);
  auto b = parseByteSize(o.begin), e = parseByteSize(o.end);
  if (!b.isOk()) return reportError(b.status());
  if (!e.isOk()) return reportError(e.status());
  auto sizes = sweepSizes(b.value(), e.value(), o.factor);
  if (!sizes.isOk()) return reportError(sizes.status());
  if (o.iters < 1 || o.warmup < 0 || (!o.baseline.empty() && o.baseline != "nccl")) {
    fmt::print(stderr, "gpupeer coll: -n >= 1, -w >= 0, --baseline nccl\n");
    return kExitUsage;
  }
  Snapshot s = probeMachine();
  int visible = static_cast<int>(s.gpus.size());
  if (visible < 2) {
    fmt::print(stderr, "gpupeer coll: needs two GPUs; {} visible{}\n", visible, visible ? "" : ": " + whyNoGpu(s));
    return kExitNotApplicable;
  }
  std::vector<int> devices;
  if (!o.devices.empty()) {
    auto list = parseDeviceList(o.devices, visible);
    if (!list.isOk()) return reportError(list.status());
    devices = list.value();
  } else {
    for (int d = 0; d < (o.gpus > 0 ? std::min(o.gpus, visible) : visible); ++d) devices.push_back(d);
  }
  auto comm = Communicator::create(devices);
  if (!comm.isOk()) return reportError(comm.status());
  std::unique_ptr<NcclBaseline> nccl;
  if (o.baseline == "nccl") {
    auto opened = NcclBaseline::open(devices);
    if (opened.isOk())
      nccl = std::move(opened).value();
    else
      fmt::print("# NCCL baseline not run: {}\n", opened.status().message());
  }
  std::size_t elementSize = dataTypeSize(type.value());
  std::size_t maxBytes = sizes.value().back();
  std::vector<Rank> ranks;
  for (int d : devices) {
    Rank r;
    r.device = d;
    cudaSetDevice(d);
    if (cudaMalloc(&r.send, maxBytes + elementSize) != cudaSuccess ||
        cudaMalloc(&r.recv, maxBytes + elementSize) != cudaSuccess) {
      fmt::print(stderr, "gpupeer coll: cannot allocate {} bytes on GPU{}\n", maxBytes, d);
      return kExitError;
    }
    cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking);
    cudaEventCreate(&r.start);
    cudaEventCreate(&r.stop);
    ranks.push_back(r);
  }
  fmt::print("# gpupeer coll {}: {} GPUs ({}), type {}, op {}, {} warm-up + {} timed back-to-back iterations{}\n",
             collOpName(op.value()), devices.size(), s.gpus[0].name, dataTypeName(type.value()),
             redOpName(redop.value()), o.warmup, o.iters,
             nccl ? ", NCCL " + nccl->version() + " on the same buffers" : "");
  fmt::print("# {:>12} {:>12} {:>8} {:>6} | {:>10} {:>8} {:>8} {:>6} | {:>10} {:>6} |{}\n", "size", "count", "type",
             "redop", "oop us", "algbw", "busbw", "#wrong", "inplace us", "#wrong",
             nccl ? fmt::format(" {:>10} {:>8} {:>6} {:>8}", "nccl us", "busbw", "#wrong", "speedup") : "");
  std::vector<cudaStream_t> streams;
  for (Rank& r : ranks) streams.push_back(r.stream);
  bool anyWrong = false;
  for (std::size_t bytes : sizes.value()) {
    std::size_t count = std::max<std::size_t>(1, bytes / elementSize);
    std::size_t realBytes = count * elementSize;
    std::vector<std::vector<std::uint8_t>> inputs(ranks.size());
    std::vector<const void*> send, sendInPlace;
    std::vector<void*> recv, inPlace;
    auto upload = [&] {
      for (std::size_t r = 0; r < ranks.size(); ++r) {
        cudaSetDevice(ranks[r].device);
        cudaMemcpy(ranks[r].send, inputs[r].data(), realBytes, cudaMemcpyHostToDevice);
      }
    };
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      inputs[r] = knownAnswerInput(type.value(), static_cast<int>(r), count);
      send.push_back(ranks[r].send);
      recv.push_back(ranks[r].recv);
      inPlace.push_back(ranks[r].send);
      sendInPlace.push_back(ranks[r].send);
    }
    Launch ours = [&](const std::vector<const void*>& sb, const std::vector<void*>& rb) {
      return comm.value()->allReduce(sb, rb, count, type.value(), redop.value(), streams);
    };
    upload();
    auto oop = timeOps(ranks, ours, send, recv, o.warmup, o.iters);
    if (!oop.isOk()) return reportError(oop.status());
    if (Status st = comm.value()->checkBarriers(); !st.isOk()) return reportError(st);
    std::size_t wrongOop = countWrong(ranks, inputs, false, count, type.value(), redop.value());
    // In place: one operation on fresh inputs for #wrong (repeats would reduce the result again).
    upload();
    Status once = comm.value()->allReduce(sendInPlace, inPlace, count, type.value(), redop.value(), streams);
    if (!once.isOk()) return reportError(once);
    for (Rank& r : ranks) cudaSetDevice(r.device), cudaStreamSynchronize(r.stream);
    std::size_t wrongInPlace = countWrong(ranks, inputs, true, count, type.value(), redop.value());
    auto inp = timeOps(ranks, ours, sendInPlace, inPlace, o.warmup, o.iters);
    if (!inp.isOk()) return reportError(inp.status());
    Bandwidth bw = collectiveBandwidth(op.value(), realBytes, oop.value(), static_cast<int>(ranks.size()));
    std::string baselineText;
    if (nccl) {
      Launch theirs = [&](const std::vector<const void*>& sb, const std::vector<void*>& rb) {
        return nccl->allReduce(sb, rb, count, type.value(), redop.value(), streams);
      };
      upload();
      auto t = timeOps(ranks, theirs, send, recv, o.warmup, o.iters);
      if (!t.isOk()) return reportError(t.status());
      std::size_t wrongNccl = countWrong(ranks, inputs, false, count, type.value(), redop.value());
      Bandwidth nb = collectiveBandwidth(op.value(), realBytes, t.value(), static_cast<int>(ranks.size()));
      baselineText = fmt::format(" {:>10.2f} {:>8.2f} {:>6} {:>7.2f}x", t.value() * 1e6, nb.busbw, wrongNccl,
                                 t.value() / oop.value());
    }
    anyWrong = anyWrong || wrongOop || wrongInPlace;
    fmt::print("  {:>12} {:>12} {:>8} {:>6} | {:>10.2f} {:>8.2f} {:>8.2f} {:>6} | {:>10.2f} {:>6} |{}\n", realBytes,
               count, dataTypeName(type.value()), redOpName(redop.value()), oop.value() * 1e6, bw.algbw, bw.busbw,
               wrongOop, inp.value() * 1e6, wrongInPlace, baselineText);
    std::fflush(stdout);
  }
  for (Rank& r : ranks) {
    cudaSetDevice(r.device);
    cudaFree(r.send);
    cudaFree(r.recv);
    cudaStreamDestroy(r.stream);
    cudaEventDestroy(r.start);
    cudaEventDestroy(r.stop);
  }
  return anyWrong ? kExitFailed : kExitOk;
}

CommandRegistrar registrar("coll", 50, [](CLI::App& app, int& exitCode) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("coll",
                                     "Collectives over P2P in nccl-tests' table (all_reduce so far), checked "
                                     "against a host reference, with --baseline nccl");
  sub->add_option("op", opts->op, "collective (all_reduce)");
  sub->add_option("-b,--minbytes", opts->begin, "smallest size (default 8)");
  sub->add_option("-e,--maxbytes", opts->end, "largest size (default 128M)");
  sub->add_option("-f,--stepfactor", opts->factor, "size factor (default 2)");
  sub->add_option("-d,--datatype", opts->type, "float, half, bfloat16, double, int8, uint8, int32, int64");
  sub->add_option("-o,--op", opts->redop, "sum, prod, min, max, avg");
  sub->add_option("-g,--ngpus", opts->gpus, "number of GPUs (default all)");
  sub->add_option("--devices", opts->devices, "GPUs to use, e.g. 0,1");
  sub->add_option("-n,--iters", opts->iters, "timed iterations (default 20)");
  sub->add_option("-w,--warmup_iters", opts->warmup, "warm-up iterations (default 5)");
  sub->add_option("--baseline", opts->baseline, "nccl: run NCCL on the same buffers and print the time ratio");
  sub->callback([opts, &exitCode] { exitCode = run(*opts); });
});

}  // namespace
}  // namespace gpupeer::cli
