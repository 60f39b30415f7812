// One rank of a RankCommunicator in its own process, for the multi-process GPU tests
// (rank_communicator_gpu_test.cpp starts several). Usage:
//   gpupeer_rank_worker SCENARIO NRANKS RANK ID_HEX [TIMEOUT_MS]
// Prints one line per check ("ok ..." or "FAIL ...") and exits 0 when every check passed, 1 on
// a failed check, 2 on bad arguments, 3 when init failed (its message printed).

#include <cuda_runtime_api.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cuda/device_memory.hpp"
#include "gpupeer/rank_communicator.hpp"
#include "harness/collective_reference.hpp"
#include "rank_scenarios.hpp"
#include "rank_worker_checks.hpp"

namespace gpupeer {
namespace {

struct Worker {
  RankCommunicator& comm;
  int n, rank;
  Stream stream;
  DeviceBuffer send, recv;
  static constexpr std::size_t kBytes = 16u << 20;

  explicit Worker(RankCommunicator& c) : comm(c), n(c.ranks()), rank(c.rank()) {
    ok(stream.create(c.device()), "stream");
    ok(send.allocate(c.device(), kBytes), "send buffer");
    ok(recv.allocate(c.device(), kBytes), "receive buffer");
  }
  cudaStream_t s() const { return stream.get(); }
  bool sync(const char* what) { return synced(comm, s(), what); }

  Status run(CollOp op, const void* in, void* out, std::size_t count, DataType type, RedOp redop, int root) {
    return runCollective(comm, op, in, out, count, type, redop, root, s());
  }

  // One operation from known-answer inputs, `offset` bytes into the buffers, checked against
  // every rank's input (each rank computes them all).
  void checkOne(CollOp op, DataType type, RedOp redop, std::size_t count, std::size_t offset, bool inPlace) {
    const int root = n - 1;
    InPlacePointers at{send.bytes() + offset, recv.bytes() + offset};
    if (inPlace) at = inPlacePointers(op, at.send, at.recv, count, type, rank);
    const auto inputs = inputsOf(op, type, count, n, 0);
    cudaMemcpy(at.send, inputs[rank].data(), inputs[rank].size(), cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    char what[160];
    std::snprintf(what, sizeof what, "%s %s %s count %zu +%zu%s", collOpName(op), dataTypeName(type), redOpName(redop),
                  count, offset, inPlace ? " in place" : "");
    if (!ok(run(op, at.send, at.recv, count, type, redop, root), what) || !sync(what)) return;
    // An out-of-place call leaves its input as it was, and so does a reduce on the ranks that
    // are not its root (they write no output; off the alignment their buffer is staged in only).
    if (!inPlace || (op == CollOp::kReduce && rank != root)) inputKept(at.send, inputs[rank], what);
    checked(comm, op, type, redop, root, count, inputs, at.recv, what);
  }

  void collectives() {
    const CollOp ops[] = {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter,
                          CollOp::kBroadcast, CollOp::kReduce,    CollOp::kAllToAll};
    const DataType types[] = {DataType::kFloat32, DataType::kBFloat16, DataType::kInt32, DataType::kInt8};
    // 40001 floats: three pieces of the tests' 64 KiB slots; 13: one line; 1: less than a word.
    for (CollOp op : ops)
      for (DataType type : types)
        for (std::size_t count : {std::size_t{1}, std::size_t{13}, std::size_t{40001}}) {
          checkOne(op, type, RedOp::kSum, count, 0, false);
          checkOne(op, type, RedOp::kMax, count, 0, true);
          checkOne(op, type, RedOp::kMin, count, dataTypeSize(type), true);  // off the alignment
        }
    std::printf("ok collectives: %d failure(s)\n", failures);
  }

  // In-place int32 sums from ones, back to back without host sync: n^k only if no operation
  // overtook another. Then the same captured in a CUDA graph and replayed.
  void backToBackAndGraphs() {
    const std::size_t count = 30001;
    std::vector<std::int32_t> ones(count, 1), got(count);
    cudaMemcpy(send.get(), ones.data(), count * 4, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    std::int64_t want = 1;
    int k = 0;
    for (; k < 12 && want * n < (std::int64_t{1} << 31); ++k, want *= n)
      if (!ok(comm.allReduce(send.get(), send.get(), count, DataType::kInt32, RedOp::kSum, s()), "sum")) return;
    if (!sync("back to back")) return;
    cudaMemcpy(got.data(), send.get(), count * 4, cudaMemcpyDeviceToHost);
    WORKER_CHECK(got[0] == want && got[count - 1] == want, "after %d sums: %d, want %lld", k, got[0],
                 static_cast<long long>(want));
    std::printf("ok back to back: %d sums\n", k);

    cudaMemcpy(send.get(), ones.data(), count * 4, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    WORKER_CHECK(cudaStreamBeginCapture(s(), cudaStreamCaptureModeRelaxed) == cudaSuccess, "begin capture");
    ok(comm.allReduce(send.get(), send.get(), count, DataType::kInt32, RedOp::kSum, s()), "captured sum");
    ok(comm.allReduce(send.get(), recv.get(), count, DataType::kInt32, RedOp::kSum, s()), "captured sum 2");
    WORKER_CHECK(cudaStreamEndCapture(s(), &graph) == cudaSuccess, "end capture");
    WORKER_CHECK(cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess, "instantiate");
    want = 1;
    for (int replay = 0; replay < 3 && exec; ++replay) {
      WORKER_CHECK(cudaGraphLaunch(exec, s()) == cudaSuccess, "launch");
      if (!sync("graph replay")) break;
      want *= n;  // in place into send
      cudaMemcpy(got.data(), recv.get(), count * 4, cudaMemcpyDeviceToHost);
      WORKER_CHECK(got[0] == want * n && got[count - 1] == want * n, "replay %d: %d, want %lld", replay, got[0],
                   static_cast<long long>(want * n));
      cudaMemcpy(got.data(), send.get(), count * 4, cudaMemcpyDeviceToHost);
      WORKER_CHECK(got[count / 2] == want, "replay %d in place: %d, want %lld", replay, got[count / 2],
                   static_cast<long long>(want));
    }
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    std::printf("ok graphs: %d failure(s)\n", failures);
  }

  std::vector<std::uint8_t> pattern(int from, int to, std::size_t bytes) {
    std::vector<std::uint8_t> v(bytes);
    for (std::size_t i = 0; i < bytes; ++i) v[i] = static_cast<std::uint8_t>(i * 31 + from * 7 + to * 3 + 1);
    return v;
  }

  // Every ordered pair in turn (the others idle), then a cycle of grouped send + recv, then a
  // send to itself.
  void pointToPoint() {
    const std::size_t bytes = (8u << 20) + 12345;  // three chunks of the 4 MiB slots, odd end
    for (int from = 0; from < n; ++from)
      for (int to = 0; to < n; ++to) {
        if (from == to || (rank != from && rank != to)) continue;
        if (rank == from) {
          std::vector<std::uint8_t> p = pattern(from, to, bytes);
          cudaMemcpy(send.bytes() + 1, p.data(), bytes, cudaMemcpyHostToDevice);
          cudaDeviceSynchronize();
          ok(comm.send(send.bytes() + 1, bytes, DataType::kUInt8, to, s()), "send");
        } else {
          ok(comm.recv(recv.bytes() + 3, bytes, DataType::kUInt8, from, s()), "recv");
        }
        if (!sync("pair")) return;
        if (rank == to) {
          std::vector<std::uint8_t> got(bytes);
          cudaMemcpy(got.data(), recv.bytes() + 3, bytes, cudaMemcpyDeviceToHost);
          WORKER_CHECK(got == pattern(from, to, bytes), "%d -> %d: bytes differ", from, to);
        }
      }
    std::printf("ok pairs\n");
    const int next = (rank + 1) % n, prev = (rank + n - 1) % n;
    std::vector<std::uint8_t> p = pattern(rank, next, bytes);
    cudaMemcpy(send.get(), p.data(), bytes, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    ok(comm.groupStart(), "group start");
    ok(comm.send(send.get(), bytes, DataType::kUInt8, next, s()), "grouped send");
    ok(comm.recv(recv.get(), bytes, DataType::kUInt8, prev, s()), "grouped recv");
    ok(comm.groupEnd(), "group end");
    if (!sync("cycle")) return;
    std::vector<std::uint8_t> got(bytes);
    cudaMemcpy(got.data(), recv.get(), bytes, cudaMemcpyDeviceToHost);
    WORKER_CHECK(got == pattern(prev, rank, bytes), "cycle: bytes from %d differ", prev);
    ok(comm.groupStart(), "group start");
    ok(comm.send(send.get(), 1000, DataType::kInt32, rank, s()), "send to itself");
    ok(comm.recv(recv.bytes() + 4, 1000, DataType::kInt32, rank, s()), "recv from itself");
    ok(comm.groupEnd(), "group end");
    if (!sync("self")) return;
    cudaMemcpy(got.data(), recv.bytes() + 4, 4000, cudaMemcpyDeviceToHost);
    WORKER_CHECK(std::memcmp(got.data(), p.data(), 4000) == 0, "send to itself: bytes differ");
    std::printf("ok cycle and self\n");
  }

  // An all-reduce from send into recv captured in a CUDA graph (null where capture failed).
  cudaGraphExec_t capturedSum(std::size_t count, DataType type) {
    return captured(s(),
                    [&] { ok(comm.allReduce(send.get(), recv.get(), count, type, RedOp::kSum, s()), "captured sum"); });
  }

  // Both buffers registered (every size reads the peers' buffers directly: the worker's
  // zeroCopyFromBytes is 0): all-reduce, all-gather and reduce-scatter against the reference,
  // in place, out of place and off the 16-byte alignment; a graph captured before the
  // registration (through the scratch) replayed after it; back to back and graphs; then
  // deregistered, through the scratch again.
  void registered() {
    const std::size_t count = 30001;
    std::vector<std::int32_t> ones(count, 1), got(count);
    cudaMemcpy(send.get(), ones.data(), count * 4, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    cudaGraphExec_t before = capturedSum(count, DataType::kInt32);
    if (!ok(comm.registerBuffer(send.get(), kBytes), "register send") ||
        !ok(comm.registerBuffer(recv.get(), kBytes), "register recv"))
      return;
    // Memory that is not the GPU's is refused, on every rank.
    std::vector<char> host(4096);
    Status refused = comm.registerBuffer(host.data(), host.size());
    WORKER_CHECK(refused.code() == ErrorCode::kInvalidArgument, "host memory: %s", refused.toString().c_str());
    // A second registration in an allocation registered already shares the peers' mappings.
    if (!ok(comm.registerBuffer(send.bytes() + (4u << 20), 4u << 20), "register a second buffer in send")) return;
    if (before) {
      WORKER_CHECK(cudaGraphLaunch(before, s()) == cudaSuccess, "launch");
      if (sync("graph captured before registration")) {
        cudaMemcpy(got.data(), recv.get(), count * 4, cudaMemcpyDeviceToHost);
        WORKER_CHECK(got[0] == n && got[count - 1] == n, "graph captured before: %d, want %d", got[0], n);
      }
      cudaGraphExecDestroy(before);
    }
    const CollOp ops[] = {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter};
    const DataType types[] = {DataType::kFloat32, DataType::kBFloat16, DataType::kInt32, DataType::kInt8};
    for (CollOp op : ops)
      for (DataType type : types)
        for (std::size_t c : {std::size_t{1}, std::size_t{13}, std::size_t{40001}, std::size_t{300001}}) {
          checkOne(op, type, RedOp::kSum, c, 0, false);
          checkOne(op, type, RedOp::kMax, c, 0, true);
          checkOne(op, type, RedOp::kMin, c, dataTypeSize(type), true);  // off the alignment
        }
    std::printf("ok registered collectives: %d failure(s)\n", failures);
    backToBackAndGraphs();
    if (!ok(comm.deregisterBuffer(send.get()), "deregister send") ||
        !ok(comm.deregisterBuffer(recv.get()), "deregister recv"))
      return;
    // Buffers in the second registration of send's allocation (the peers' mapping of it
    // outlived the first), then none at all.
    std::uint8_t* second = send.bytes() + (4u << 20);
    std::vector<std::int32_t> twos(count, 2);
    cudaMemcpy(second, twos.data(), count * 4, cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
    if (ok(comm.allReduce(second, second, count, DataType::kInt32, RedOp::kSum, s()), "in the second registration") &&
        sync("in the second registration")) {
      cudaMemcpy(got.data(), second, count * 4, cudaMemcpyDeviceToHost);
      WORKER_CHECK(got[0] == 2 * n && got[count - 1] == 2 * n, "second registration: %d, want %d", got[0], 2 * n);
    }
    if (!ok(comm.deregisterBuffer(second), "deregister the second")) return;
    for (CollOp op : ops) checkOne(op, DataType::kFloat32, RedOp::kSum, 40001, 0, false);
    std::printf("ok deregistered: %d failure(s)\n", failures);
  }

  // A graph captured with registered buffers, replayed after they were deregistered: every
  // rank reports it (kInvalidArgument) at once, without a fault or a timeout.
  void registeredStale() {
    const std::size_t count = 300001;
    if (!ok(comm.registerBuffer(send.get(), kBytes), "register send") ||
        !ok(comm.registerBuffer(recv.get(), kBytes), "register recv"))
      return;
    cudaGraphExec_t exec = capturedSum(count, DataType::kFloat32);
    if (!exec) return;
    WORKER_CHECK(cudaGraphLaunch(exec, s()) == cudaSuccess, "launch");
    if (!sync("graph while registered")) return;
    if (!ok(comm.deregisterBuffer(send.get()), "deregister send") ||
        !ok(comm.deregisterBuffer(recv.get()), "deregister recv"))
      return;
    const auto start = std::chrono::steady_clock::now();
    WORKER_CHECK(cudaGraphLaunch(exec, s()) == cudaSuccess, "launch");
    WORKER_CHECK(cudaStreamSynchronize(s()) == cudaSuccess, "stale graph: %s", cudaGetErrorString(cudaGetLastError()));
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Status e = comm.checkError();
    WORKER_CHECK(e.code() == ErrorCode::kInvalidArgument && e.message().find("not registered") != std::string::npos,
                 "rank %d: %s", rank, e.toString().c_str());
    WORKER_CHECK(waited < 5.0, "rank %d waited %.1f s", rank, waited);
    cudaGraphExecDestroy(exec);
    std::printf("ok stale graph: rank %d reported after %.2f s: %s\n", rank, waited, e.message().c_str());
  }

  // The last rank is killed after a few operations; every survivor must report it by the bound
  // and shut down.
  void killed(int timeoutMs) {
    const std::size_t count = 1000;
    for (int i = 0; i < 40; ++i) {
      if (rank == n - 1 && i == 5) {
        cudaStreamSynchronize(s());
        std::printf("rank %d: killing itself\n", rank);
        std::fflush(stdout);
        raise(SIGKILL);
      }
      if (!comm.allReduce(send.get(), recv.get(), count, DataType::kFloat32, RedOp::kSum, s()).isOk()) break;
    }
    survive(timeoutMs, "");
  }

  // A survivor of the last rank's death: its stream ends within the bound, checkError names the
  // dead rank, and the failed communicator refuses more work.
  void survive(int timeoutMs, const std::string& call) {
    const auto start = std::chrono::steady_clock::now();
    cudaStreamSynchronize(s());
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Status st = comm.checkError();
    WORKER_CHECK(st.code() == ErrorCode::kTimeout, "survivor %d: %s", rank, st.toString().c_str());
    const std::string named = "for rank " + std::to_string(n - 1) + " (pid";
    WORKER_CHECK(st.message().find(named) != std::string::npos, "survivor %d: %s", rank, st.message().c_str());
    WORKER_CHECK(waited < 2.0 * timeoutMs / 1000 + 5, "survivor %d waited %.1f s", rank, waited);
    WORKER_CHECK(!comm.allReduce(send.get(), recv.get(), 1000, DataType::kFloat32, RedOp::kSum, s()).isOk(),
                 "a failed communicator accepted more work");
    std::printf("ok survivor %d%s: reported after %.2f s: %s\n", rank, call.c_str(), waited, st.message().c_str());
  }

  // The last rank dies while an all-reduce of `bytes` runs (eager, or replayed from a graph):
  // it launches the call, lets the kernels start moving data, and kills itself without waiting.
  // Every survivor must report it within the bound, naming the rank, and refuse more work;
  // nothing may fault on the dead process's memory.
  void killedDuring(std::size_t bytes, bool graph, int timeoutMs) {
    const std::size_t count = bytes / 4;
    DeviceBuffer in, out;
    if (!ok(in.allocate(comm.device(), bytes), "large send buffer") ||
        !ok(out.allocate(comm.device(), bytes), "large receive buffer"))
      return;
    cudaMemset(in.get(), 0, bytes);
    cudaDeviceSynchronize();
    auto call = [&] { ok(comm.allReduce(in.get(), out.get(), count, DataType::kFloat32, RedOp::kSum, s()), "sum"); };
    call();  // every rank has made a whole call of this size before one dies
    if (!sync("the first call")) return;
    cudaGraphExec_t exec = graph ? captured(s(), call) : nullptr;
    if (graph && !exec) return;
    for (int i = 0; i < 3; ++i) {
      if (exec)
        cudaGraphLaunch(exec, s());
      else if (!comm.allReduce(in.get(), out.get(), count, DataType::kFloat32, RedOp::kSum, s()).isOk())
        break;
      if (rank == n - 1 && i == 1) {
        std::this_thread::sleep_for(std::chrono::microseconds(300));  // inside the second call
        std::printf("rank %d: killing itself during a %zu MiB all-reduce\n", rank, bytes >> 20);
        std::fflush(stdout);
        raise(SIGKILL);
      }
    }
    survive(timeoutMs, " of a " + std::to_string(bytes >> 20) + " MiB " + (graph ? "graph" : "eager") + " call");
    if (exec) cudaGraphExecDestroy(exec);
  }

  // After a matched all-reduce, the last rank makes a call that differs from the others' in
  // `kind`: count (1000 against 999 floats, both in 16-byte lines), count-ce (the same through
  // the copy engines), variant (1000 floats in lines against 1.5M in two pieces of the regular
  // variant), op, type, redop, root, or registered (its buffers registered, the others' not:
  // the pull kernel against lines). Every rank must report kInvalidArgument naming the calls
  // well before the bound (a timeout would mean the call lines did not catch it), and refuse
  // further work.
  void mismatched(const std::string& kind, int timeoutMs) {
    const std::size_t count = 1000;
    DeviceBuffer large;
    if (!ok(comm.allReduce(send.get(), recv.get(), count, DataType::kFloat32, RedOp::kSum, s()), "matched call") ||
        !sync("matched call"))
      return;
    const bool odd = rank == n - 1;
    const auto start = std::chrono::steady_clock::now();
    Status st;
    if (kind == "count")
      st = comm.allReduce(send.get(), recv.get(), odd ? count - 1 : count, DataType::kFloat32, RedOp::kSum, s());
    else if (kind == "variant")
      st = comm.allReduce(send.get(), recv.get(), odd ? 1'500'000 : count, DataType::kFloat32, RedOp::kSum, s());
    else if (kind == "op")
      st = odd ? comm.allGather(send.get(), recv.get(), count, DataType::kFloat32, s())
               : comm.allReduce(send.get(), recv.get(), count, DataType::kFloat32, RedOp::kSum, s());
    else if (kind == "type")
      st = comm.allReduce(send.get(), recv.get(), count, odd ? DataType::kInt32 : DataType::kFloat32, RedOp::kSum, s());
    else if (kind == "redop")
      st = comm.allReduce(send.get(), recv.get(), count, DataType::kFloat32, odd ? RedOp::kMax : RedOp::kSum, s());
    else if (kind == "count-ce") {
      // 128 MiB of floats against one float fewer: the copy engines through the scratch
      // (GPUPEER_ALGO=ce), whose arrival carries the call.
      constexpr std::size_t kLarge = 32u << 20;
      if (!ok(large.allocate(comm.device(), kLarge * sizeof(float)), "large buffer")) return;
      st = comm.allReduce(large.get(), large.get(), odd ? kLarge - 1 : kLarge, DataType::kFloat32, RedOp::kSum, s());
      if (st.isOk() && std::string(comm.algorithmFor(CollOp::kAllReduce, kLarge * sizeof(float), false)) != "ce")
        st = Status(ErrorCode::kInternal, "the all-reduce does not take the copy engines");
    } else if (kind == "root")
      st = comm.broadcast(send.get(), recv.get(), count, DataType::kFloat32, odd ? 0 : n - 1, s());
    else if (kind == "registered" && ok(comm.registerBuffer(recv.get(), kBytes), "register"))
      // In place in the registered buffer on the last rank only: it reads its peers' buffers
      // directly, the others go through the scratch.
      st = comm.allReduce(odd ? recv.get() : send.get(), recv.get(), count, DataType::kFloat32, RedOp::kSum, s());
    else
      st = Status(ErrorCode::kInvalidArgument, "unknown kind " + kind);
    if (!ok(st, "mismatched call")) return;
    cudaStreamSynchronize(s());
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Status e = comm.checkError();
    WORKER_CHECK(e.code() == ErrorCode::kInvalidArgument, "rank %d: %s", rank, e.toString().c_str());
    // The others name the last rank; the last rank names whichever of them it compared first.
    const std::string named = odd ? " (this rank) " : "rank " + std::to_string(n - 1) + " called ";
    WORKER_CHECK(e.message().find(named) != std::string::npos, "rank %d: %s", rank, e.message().c_str());
    WORKER_CHECK(waited < 5.0 && waited < timeoutMs / 2000.0, "rank %d waited %.1f s", rank, waited);
    WORKER_CHECK(!comm.allReduce(send.get(), recv.get(), count, DataType::kFloat32, RedOp::kSum, s()).isOk(),
                 "a failed communicator accepted more work");
    std::printf("ok mismatch %s: rank %d reported after %.2f s: %s\n", kind.c_str(), rank, waited, e.message().c_str());
  }
};

// Rank 0 waits for an operation that rank 1 never makes; another thread aborts it.
void aborted(RankCommunicator& comm, Worker& w) {
  if (comm.rank() != 0) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  ok(comm.allReduce(w.send.get(), w.recv.get(), 100, DataType::kFloat32, RedOp::kSum, w.s()), "enqueue");
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    comm.abort();
  });
  cudaStreamSynchronize(w.s());
  aborter.join();
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Status st = comm.checkError();
  WORKER_CHECK(st.message().find("aborted") != std::string::npos, "%s", st.toString().c_str());
  WORKER_CHECK(waited < 5, "abort took %.1f s", waited);
  std::printf("ok aborted after %.2f s\n", waited);
}

int run(int argc, char** argv) {
  if (argc < 5) return 2;
  const std::string scenario = argv[1];
  const int n = std::atoi(argv[2]), rank = std::atoi(argv[3]);
  const int timeoutMs = argc > 5 ? std::atoi(argv[5]) : 20000;
  Result<UniqueId> parsed = uniqueIdFromHex(argv[4]);
  if (!parsed.isOk()) return 2;
  const UniqueId& id = parsed.value();
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) return 2;
  // A scenario ending in -ce takes the copy engines through the scratch wherever they serve,
  // one ending in -relay the relay kernel (broadcast and reduce).
  if (const std::string last = scenario.substr(scenario.rfind('-') + 1); last == "ce" || last == "relay")
    setenv("GPUPEER_ALGO", last.c_str(), 1);
  // The last rank is given another chain step than the others: init must refuse on every rank.
  if (scenario == "tuning-differs") setenv("GPUPEER_CHAIN_STEP", rank == n - 1 ? "64K" : "32K", 1);
  // The last rank counts as on another host than the others: init must refuse on every rank.
  if (scenario == "hosts-differ") setenv("GPUPEER_HOST_ID", rank == n - 1 ? "worker-host-b" : "worker-host-a", 1);
  RankCommOptions options;
  options.device = rank % devices;
  options.timeoutMs = timeoutMs;
  // Small slots put the collectives' pieces in several kernels, and registered buffers are
  // read directly at every size (also in the registered large calls); the mismatches keep the
  // default slots, so that a large call takes the regular variant, and the large calls every
  // other default.
  const bool mismatch = scenario.rfind("mismatch-", 0) == 0;
  const bool large = scenario == "many-piece-sums" || scenario.rfind("large-calls", 0) == 0 || scenario == "soak" ||
                     scenario.rfind("killed-during-", 0) == 0;
  if (!mismatch && !large) options.slotBytes = 64u << 10;
  if (!large || scenario.rfind("large-calls-registered", 0) == 0) options.zeroCopyFromBytes = 0;
  // The relay's parts then span many slots, every other one at the other parity.
  if (scenario == "large-calls-relay") options.slotBytes = 1u << 20;
  auto made = RankCommunicator::init(n, id, rank, options);
  if (!made.isOk()) {
    std::printf("init failed: %s\n", made.status().toString().c_str());
    return 3;
  }
  RankCommunicator& comm = *made.value();
  std::printf("rank %d of %d on GPU%d: %s\n", rank, n, comm.device(), comm.transport().c_str());
  Worker w(comm);
  if (scenario == "collectives") {
    w.collectives();
    w.backToBackAndGraphs();
  } else if (scenario == "p2p") {
    w.pointToPoint();
  } else if (scenario == "p2p-all-to-all") {
    allToAllBySends(comm, w.s(), (8u << 20) + 12345, 2);  // three chunks of the 4 MiB slots
  } else if (scenario == "p2p-length-longer") {
    sendRecvLengthsDiffer(comm, w.s(), 1u << 20, (1u << 20) + 16);
  } else if (scenario == "p2p-length-shorter") {
    sendRecvLengthsDiffer(comm, w.s(), (12u << 20) + 5, (8u << 20) + 5);
  } else if (scenario == "killed") {
    w.killed(timeoutMs);
  } else if (scenario.rfind("killed-during-", 0) == 0) {  // killed-during-<MiB>-<eager|graph>
    const std::size_t mib = std::strtoull(scenario.c_str() + 14, nullptr, 10);
    w.killedDuring(mib << 20, scenario.find("-graph") != std::string::npos, timeoutMs);
  } else if (scenario == "registered") {
    w.registered();
  } else if (scenario == "registered-stale") {
    w.registeredStale();
  } else if (mismatch) {
    w.mismatched(scenario.substr(9), timeoutMs);
  } else if (scenario == "many-piece-sums") {
    manyPieceSumsOnFreshInputs(comm, w.s());
  } else if (scenario == "large-calls" || scenario == "large-calls-ce" || scenario == "large-calls-relay" ||
             scenario == "large-calls-registered" || scenario == "large-calls-registered-cumem") {
    largeCallsOnFreshInputs(comm, w.s(), scenario.rfind("large-calls-registered", 0) == 0,
                            scenario == "large-calls-registered-cumem");
  } else if (scenario == "soak") {
    soakAgainstNccl(comm, w.s(), 10000);
  } else if (scenario == "abort") {
    aborted(comm, w);
  } else {
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  made.value().reset();
  std::printf("destroyed in %.2f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  std::printf("%s: %d failure(s)\n", scenario.c_str(), failures);
  return failures ? 1 : 0;
}

}  // namespace
}  // namespace gpupeer

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  return gpupeer::run(argc, argv);
}
