#include "coll_procs.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli_output.hpp"
#include "command_registry.hpp"
#include "core/bounded_input.hpp"
#include "core/output_file.hpp"
#include "core/sweep_progress.hpp"
#include "cuda/copy_kernels.cuh"
#include "cuda/device_memory.hpp"
#include "gpupeer/bench.hpp"
#include "gpupeer/rank_communicator.hpp"
#include "harness/collective_reference.hpp"
#include "harness/nccl_baseline.hpp"

extern char** environ;

namespace gpupeer::cli {
namespace {

using Clock = std::chrono::steady_clock;

// One operation of this rank, gpupeer's or NCCL's.
using RankLaunch = std::function<Status()>;

struct Timing {
  double deviceUs = 0;  // per operation, from events on the rank's stream
  double hostUs = 0;    // per operation, the host's time to enqueue it (eager only)
  std::string error;
};

// `iters` operations back to back after `warmup`, eagerly or captured once and replayed.
// `align` returns once every rank is there: without it a rank that starts its timed operations
// first also times its wait for the others, whose host work up to here takes longer (512 KiB-2
// MiB all-reduces read 0.2-1.2 ms in 4 of 6 runs on 2x H100, 7-12 us with it).
Timing timeRank(const RankLaunch& launch, cudaStream_t stream, int warmup, int iters, int graphLaunches,
                const std::function<void()>& align) {
  Timing t;
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  auto fail = [&](const Status& st) {
    t.error = st.message();
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return t;
  };
  for (int i = 0; i < warmup; ++i)
    if (Status st = launch(); !st.isOk()) return fail(st);
  cudaStreamSynchronize(stream);
  if (graphLaunches == 0) {
    align();
    cudaEventRecord(start, stream);
    const auto host = Clock::now();
    for (int i = 0; i < iters; ++i)
      if (Status st = launch(); !st.isOk()) return fail(st);
    t.hostUs = std::chrono::duration<double, std::micro>(Clock::now() - host).count() / iters;
    cudaEventRecord(stop, stream);
  } else {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed);
    Status captured;
    for (int i = 0; i < iters && captured.isOk(); ++i) captured = launch();
    cudaStreamEndCapture(stream, &graph);
    if (!captured.isOk() || !graph || cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
      if (graph) cudaGraphDestroy(graph);
      return fail(captured.isOk() ? Status(ErrorCode::kCuda, "graph capture failed") : captured);
    }
    cudaGraphLaunch(exec, stream);  // the first launch uploads the graph
    align();
    cudaEventRecord(start, stream);
    for (int i = 0; i < graphLaunches; ++i) cudaGraphLaunch(exec, stream);
    cudaEventRecord(stop, stream);
    cudaStreamSynchronize(stream);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    iters *= graphLaunches;
  }
  cudaStreamSynchronize(stream);
  float ms = 0;
  if (cudaEventElapsedTime(&ms, start, stop) != cudaSuccess) t.error = cudaGetErrorString(cudaGetLastError());
  t.deviceUs = 1000.0 * ms / iters;
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return t;
}

// The host's cost of launching one small kernel (a 16-byte copy in one block; median of 1000):
// the floor under any eager operation's host time.
double smallLaunchUs(void* scratch, cudaStream_t stream) {
  std::vector<double> us;
  for (int i = 0; i < 1000; ++i) {
    const auto t = Clock::now();
    launchSmCopy(static_cast<char*>(scratch) + 32, scratch, 16, stream, 1);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
  }
  cudaStreamSynchronize(stream);
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

}  // namespace

int runCollProcsParent(const CollProcsOptions& o) {
  Result<UniqueId> id = makeUniqueId();
  if (!id.isOk()) {
    fmt::print(stderr, "gpupeer coll: {}\n", terminalSafe(id.status().message()));
    return kExitError;
  }
  const std::string hex = uniqueIdToHex(id.value());
  std::vector<pid_t> pids;
  for (int r = 0; r < o.procs; ++r) {
    std::vector<std::string> args = {"/proc/self/exe"};
    args.insert(args.end(), o.args.begin(), o.args.end());
    args.insert(args.end(), {"--proc-rank", std::to_string(r), "--proc-id", hex});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) != 0) {
      fmt::print(stderr, "gpupeer coll: cannot start rank {}: {}\n", r, std::strerror(errno));
      for (pid_t p : pids) kill(p, SIGKILL);
      return kExitError;
    }
    pids.push_back(pid);
  }
  int worst = kExitOk;
  for (pid_t p : pids) {
    int status = 0;
    waitpid(p, &status, 0);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : kExitError;
    worst = std::max(worst, code);
  }
  return worst;
}

int runCollProcsRank(const CollProcsOptions& o) {
  const int n = o.procs, rank = o.rank;
  Result<UniqueId> parsed = uniqueIdFromHex(o.idHex);
  if (!parsed.isOk()) {
    fmt::print(stderr, "gpupeer coll: --proc-id: {}\n", terminalSafe(parsed.status().message()));
    return kExitUsage;
  }
  const UniqueId& id = parsed.value();
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess || visible == 0) {
    fmt::print(stderr, "gpupeer coll: rank {}: no GPU visible\n", rank);
    return kExitNotApplicable;
  }
  RankCommOptions options;
  options.device = rank % visible;
  options.slotBytes = o.slotBytes;
  if (o.zeroCopyFromBytes) options.zeroCopyFromBytes = *o.zeroCopyFromBytes;
  auto made = RankCommunicator::init(n, id, rank, options);
  if (!made.isOk()) {
    fmt::print(stderr, "gpupeer coll: rank {}: {}\n", rank, terminalSafe(made.status().toString()));
    return kExitError;
  }
  RankCommunicator& comm = *made.value();
  const int device = comm.device();
  cudaSetDevice(device);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  const std::size_t es = dataTypeSize(o.type);
  const std::size_t divisor =
      (o.op == CollOp::kAllGather || o.op == CollOp::kReduceScatter || o.op == CollOp::kAllToAll) ? n : 1;
  auto countFor = [&](std::size_t bytes) { return std::max<std::size_t>(1, bytes / (es * divisor)); };
  const std::size_t maxCount = countFor(o.sizes.back());
  DeviceBuffer send, recv, stats;
  for (auto [buffer, bytes] :
       {std::pair{&send, collectiveInputElements(o.op, maxCount, n) * es},
        std::pair{&recv, collectiveOutputElements(o.op, maxCount, n) * es}, std::pair{&stats, std::size_t{256}}})
    if (Status st = buffer->allocate(device, bytes); !st.isOk()) {
      fmt::print(stderr, "gpupeer coll: rank {}: {}\n", rank, terminalSafe(st.toString()));
      return kExitError;
    }
  if (o.registered)
    for (DeviceBuffer* buffer : {&send, &recv})
      if (Status st = comm.registerBuffer(buffer->get(), buffer->size()); !st.isOk()) {
        fmt::print(stderr, "gpupeer coll: rank {}: registering a buffer: {}\n", rank, terminalSafe(st.toString()));
        return kExitError;
      }

  // NCCL in the same shape: rank 0's id carried to the others by gpupeer's own broadcast.
  std::unique_ptr<NcclBaseline> nccl;
  std::string ncclNote;
  if (o.nccl && visible < n) {
    // NCCL refuses two ranks on one GPU, and a rank alone on its GPU then waits in
    // ncclCommInitRank for ranks that gave up: no baseline rather than a hang.
    ncclNote = fmt::format("{} ranks share {} GPU(s), and NCCL takes one GPU per rank", n, visible);
  } else if (o.nccl) {
    NcclBaseline::Id ncclId{};
    Result<NcclBaseline::Id> made0 = rank == 0 ? NcclBaseline::uniqueId() : Result<NcclBaseline::Id>(ncclId);
    if (made0.isOk()) ncclId = made0.value();
    cudaMemcpy(stats.get(), ncclId.data(), ncclId.size(), cudaMemcpyHostToDevice);
    Status st = comm.broadcast(stats.get(), stats.get(), ncclId.size(), DataType::kUInt8, 0, stream);
    cudaStreamSynchronize(stream);
    if (st.isOk()) st = comm.checkError();
    cudaMemcpy(ncclId.data(), stats.get(), ncclId.size(), cudaMemcpyDeviceToHost);
    auto opened = st.isOk() && made0.isOk() ? NcclBaseline::openRank(n, ncclId, rank, device)
                                            : Result<std::unique_ptr<NcclBaseline>>(made0.isOk() ? st : made0.status());
    if (opened.isOk())
      nccl = std::move(opened).value();
    else
      ncclNote = opened.status().message();
  }
  // Every rank's time (max) and #wrong (sum), through the communicator itself.
  auto gather = [&](double value, RedOp op) {
    cudaMemcpy(stats.get(), &value, sizeof value, cudaMemcpyHostToDevice);
    Status st = comm.allReduce(stats.get(), stats.get(), 1, DataType::kFloat64, op, stream);
    cudaStreamSynchronize(stream);
    cudaMemcpy(&value, stats.get(), sizeof value, cudaMemcpyDeviceToHost);
    return st.isOk() ? value : -1.0;
  };
  const double launchUs = smallLaunchUs(stats.get(), stream);
  if (rank == 0 && !o.json) {  // with --json, the document alone goes to standard output
    fmt::print(
        "# gpupeer coll {} --procs {}: {} processes, one rank each; {}; one-shot slots of {}{}; type {}{}{}; {}\n",
        collOpName(o.op), n, n, comm.transport(), formatBytes(comm.slotBytes()),
        !o.registered ? std::string()
        : o.zeroCopyFromBytes
            ? fmt::format("; buffers registered, read directly from {} per rank", formatBytes(*o.zeroCopyFromBytes))
            : std::string("; buffers registered, read directly where measured faster"),
        dataTypeName(o.type), collOpReduces(o.op) ? fmt::format(", op {}", redOpName(o.redop)) : "",
        collOpRooted(o.op) ? fmt::format(", root {}", o.root) : "",
        o.graphLaunches ? fmt::format("{} operations captured in a CUDA graph per process, replayed {} times", o.iters,
                                      o.graphLaunches)
                        : fmt::format("{} warm-up + {} timed back-to-back operations", o.warmup, o.iters));
    if (visible < n)
      fmt::print("# {} GPU(s) for {} ranks: ranks share GPUs, times show time slicing, not speed\n", visible, n);
    fmt::print("# host: one small kernel launch {:.2f} us (rank 0, median of 1000)\n", launchUs);
    if (o.nccl)
      fmt::print("# baseline: {}\n",
                 nccl ? "NCCL " + nccl->version() + ", ncclCommInitRank per process" : "NCCL not run: " + ncclNote);
    fmt::print("# {:>11} {:>11} {:>8} {:>6} {:>4} {:>7} | {:>9} {:>7} {:>7} {:>6} | {:>9} |{}\n", "size", "count",
               "type", "redop", "root", "algo", "time us", "algbw", "busbw", "#wrong", "host us",
               nccl ? "    nccl us   busbw #wrong   ratio |" : "");
  }
  if (rank == 0 && o.json && o.nccl && !nccl) fmt::print(stderr, "# baseline: NCCL not run: {}\n", ncclNote);
  nlohmann::json doc = {{"op", collOpName(o.op)},
                        {"type", dataTypeName(o.type)},
                        {"procs", n},
                        {"mode", o.graphLaunches ? "graph" : "eager"},
                        {"launch_us", launchUs},
                        {"nccl_version", nccl ? nccl->version() : ""},
                        {"rows", nlohmann::json::array()}};
  bool anyWrong = false, anyError = false;
  // Rank 0 alone says how far the sweep is; the others' standard error stays quiet.
  SweepProgress progress(fmt::format("gpupeer coll {} --procs {}", collOpName(o.op), n), o.sizes.size(), o.progress,
                         rank == 0 ? stderr : nullptr);
  for (std::size_t size : o.sizes) {
    const std::size_t count = countFor(size), shown = collectiveBytes(o.op, count, o.type, n);
    // The timed operations run on inputs of salt 0, the checked one on salt 1: a value left
    // over from an earlier operation (a stale scratch line, a chunk not yet written) differs
    // from the one expected, where on the same inputs it would match.
    std::vector<std::vector<std::uint8_t>> inputs;
    std::vector<const void*> in;
    for (int r = 0; r < n; ++r)
      inputs.push_back(knownAnswerInput(o.type, r, collectiveInputElements(o.op, count, n), 1));
    for (auto& v : inputs) in.push_back(v.data());
    const std::vector<std::uint8_t> timedInput =
        knownAnswerInput(o.type, rank, collectiveInputElements(o.op, count, n), 0);
    auto upload = [&](const std::vector<std::uint8_t>& mine) {
      cudaMemcpy(send.get(), mine.data(), mine.size(), cudaMemcpyHostToDevice);
      cudaDeviceSynchronize();
    };
    auto wrongOf = [&]() -> double {
      if (!o.check || (o.op == CollOp::kReduce && rank != o.root)) return 0;
      std::vector<std::uint8_t> got(collectiveOutputElements(o.op, count, n) * es);
      cudaMemcpy(got.data(), recv.get(), got.size(), cudaMemcpyDeviceToHost);
      return static_cast<double>(checkCollective(o.op, o.type, o.redop, o.root, in, rank, got.data(), count).wrong);
    };
    auto runOn = [&](auto&& one) {
      upload(timedInput);
      Timing t = timeRank(one, stream, o.warmup, o.iters, o.graphLaunches, [&] { gather(0, RedOp::kMax); });
      upload(inputs[rank]);  // one checked operation on fresh inputs
      if (t.error.empty())
        if (Status st = one(); !st.isOk()) t.error = st.message();
      cudaStreamSynchronize(stream);
      return std::pair{t, wrongOf()};
    };
    RankLaunch ours = [&] {
      switch (o.op) {
        case CollOp::kAllReduce: return comm.allReduce(send.get(), recv.get(), count, o.type, o.redop, stream);
        case CollOp::kAllGather: return comm.allGather(send.get(), recv.get(), count, o.type, stream);
        case CollOp::kReduceScatter: return comm.reduceScatter(send.get(), recv.get(), count, o.type, o.redop, stream);
        case CollOp::kBroadcast: return comm.broadcast(send.get(), recv.get(), count, o.type, o.root, stream);
        case CollOp::kReduce: return comm.reduce(send.get(), recv.get(), count, o.type, o.redop, o.root, stream);
        case CollOp::kAllToAll: return comm.allToAll(send.get(), recv.get(), count, o.type, stream);
        case CollOp::kSendRecv: {  // nccl-tests' sendrecv: to the next rank, from the previous
          GPUPEER_RETURN_IF_ERROR(comm.groupStart());
          GPUPEER_RETURN_IF_ERROR(comm.send(send.get(), count, o.type, (rank + 1) % n, stream));
          GPUPEER_RETURN_IF_ERROR(comm.recv(recv.get(), count, o.type, (rank + n - 1) % n, stream));
          return comm.groupEnd();
        }
      }
      return Status(ErrorCode::kInvalidArgument, "op");
    };
    auto [mine, mineWrong] = runOn(ours);
    Status health = comm.checkError();
    if (!health.isOk() && mine.error.empty()) mine.error = health.message();
    const double us = gather(mine.deviceUs, RedOp::kMax), wrong = gather(mineWrong, RedOp::kSum),
                 hostUs = gather(mine.hostUs, RedOp::kMax), failed = gather(mine.error.empty() ? 0 : 1, RedOp::kMax);
    const char* algo = comm.algorithmFor(o.op, shown, o.registered);
    nlohmann::json row = {{"bytes", shown}, {"count", count}, {"algo", algo}};
    // The one-process table's columns, so that scripts read both alike.
    std::string line =
        fmt::format("  {:>11} {:>11} {:>8} {:>6} {:>4} {:>7} |", shown, count, dataTypeName(o.type),
                    collOpReduces(o.op) ? redOpName(o.redop) : "none", collOpRooted(o.op) ? o.root : -1, algo);
    if (failed == 0) {
      Bandwidth bw = collectiveBandwidth(o.op, shown, us * 1e-6, n);
      line += fmt::format(" {:>9.2f} {:>7.2f} {:>7.2f} {:>6.0f} | {:>9.2f} |", us, bw.algbw, bw.busbw, wrong,
                          o.graphLaunches ? 0.0 : hostUs);
      row.update({{"us", us}, {"busbw", bw.busbw}, {"wrong", wrong}, {"host_us", hostUs}});
    } else {
      line += fmt::format(" {:>33} | {:>9} |", "FAILED", "");
      row["error"] = mine.error.empty() ? "on another rank" : mine.error;
      anyError = true;
    }
    anyWrong = anyWrong || wrong > 0;
    if (nccl) {
      RankLaunch theirs = [&] {
        return nccl->run(o.op, {send.get()}, {recv.get()}, count, o.type, o.redop, o.root, {stream});
      };
      auto [base, baseWrong] = runOn(theirs);
      const double bus = gather(base.deviceUs, RedOp::kMax), bwrong = gather(baseWrong, RedOp::kSum),
                   bfailed = gather(base.error.empty() ? 0 : 1, RedOp::kMax);
      if (bfailed == 0) {
        Bandwidth nb = collectiveBandwidth(o.op, shown, bus * 1e-6, n);
        line += fmt::format(" {:>10.2f} {:>7.2f} {:>6.0f} {:>6.2f}x |", bus, nb.busbw, bwrong,
                            failed == 0 && us > 0 ? bus / us : 0.0);
        row["nccl"] = {{"us", bus}, {"busbw", nb.busbw}, {"wrong", bwrong}};
      } else {
        line += fmt::format(" {:>33} |", "FAILED");
        row["nccl"] = {{"error", base.error.empty() ? "on another rank" : base.error}};
      }
    }
    if (rank == 0 && !o.json) {
      fmt::print("{}\n", line);
      if (!mine.error.empty()) fmt::print("#   gpupeer: {}\n", mine.error);
      std::fflush(stdout);
    }
    doc["rows"].push_back(row);
    progress.done(formatBytes(size));
    if (failed != 0) break;  // the communicator refuses work after a failure
  }
  const std::string document = rank == 0 && (o.json || !o.output.empty()) ? dumpJson(doc, 1) + "\n" : std::string();
  if (rank == 0 && o.json) fmt::print("{}", document);
  if (rank == 0 && !o.output.empty()) {
    Status written = writeOutputFile(o.output, document);
    if (!written.isOk()) {
      fmt::print(stderr, "gpupeer coll: {}\n", terminalSafe(written.message()));
      anyError = true;
    }
  }
  nccl.reset();
  made.value().reset();
  cudaStreamDestroy(stream);
  if (anyError) return kExitError;
  return anyWrong ? kExitFailed : kExitOk;
}

}  // namespace gpupeer::cli
