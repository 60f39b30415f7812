// Calls of many pieces between processes, each on inputs no earlier call used. A check on the
// same inputs as the calls before it cannot see data left over from them (a scratch line read
// before all of it landed holds the same values as the line it should have been); salted
// inputs make every such element wrong.

#include <cstring>
#include <vector>

#include "cuda/device_memory.hpp"
#include "cuda/vmm_memory.hpp"
#include "harness/collective_reference.hpp"
#include "rank_scenarios.hpp"
#include "rank_worker_checks.hpp"

namespace gpupeer {

Status runCollective(RankCommunicator& comm, CollOp op, const void* send, void* recv, std::size_t count, DataType type,
                     RedOp redop, int root, cudaStream_t stream) {
  const int n = comm.ranks(), rank = comm.rank();
  switch (op) {
    case CollOp::kAllReduce: return comm.allReduce(send, recv, count, type, redop, stream);
    case CollOp::kAllGather: return comm.allGather(send, recv, count, type, stream);
    case CollOp::kReduceScatter: return comm.reduceScatter(send, recv, count, type, redop, stream);
    case CollOp::kBroadcast: return comm.broadcast(send, recv, count, type, root, stream);
    case CollOp::kReduce: return comm.reduce(send, recv, count, type, redop, root, stream);
    case CollOp::kAllToAll: return comm.allToAll(send, recv, count, type, stream);
    case CollOp::kSendRecv: {
      GPUPEER_RETURN_IF_ERROR(comm.groupStart());
      Status sent = comm.send(send, count, type, (rank + 1) % n, stream);
      Status received = sent.isOk() ? comm.recv(recv, count, type, (rank + n - 1) % n, stream) : sent;
      Status ended = comm.groupEnd();
      return received.isOk() ? ended : received;
    }
  }
  return Status(ErrorCode::kInvalidArgument, "op");
}

void manyPieceSumsOnFreshInputs(RankCommunicator& comm, cudaStream_t stream) {
  // 32 MiB and 12 bytes: eight pieces of 4 MiB, each with 128-byte lines past the first round
  // of the 128-byte variant's grid on 2 GPUs, and a last piece that is not whole 8-byte words.
  constexpr std::size_t kCount = (8u << 20) + 3;
  constexpr int kInputs = 3, kCalls = 12;
  const int n = comm.ranks(), rank = comm.rank(), device = comm.device();
  const DataType type = DataType::kFloat32;
  std::vector<std::vector<std::vector<std::uint8_t>>> inputs;
  std::vector<DeviceBuffer> in(kInputs), out(kCalls);
  for (int k = 0; k < kInputs; ++k) {
    inputs.push_back(inputsOf(CollOp::kAllReduce, type, kCount, n, k + 1));
    if (!ok(in[k].allocate(device, kCount * 4), "input buffer")) return;
    cudaMemcpy(in[k].get(), inputs[k][rank].data(), kCount * 4, cudaMemcpyHostToDevice);
  }
  for (DeviceBuffer& b : out)
    if (!ok(b.allocate(device, kCount * 4), "output buffer")) return;
  cudaDeviceSynchronize();
  auto calls = [&] {
    for (int c = 0; c < kCalls; ++c)
      if (!ok(comm.allReduce(in[c % kInputs].get(), out[c].get(), kCount, type, RedOp::kSum, stream), "sum")) return;
  };
  auto checkAll = [&](const char* mode) {
    int wrongCalls = 0;
    for (int c = 0; c < kCalls; ++c) {
      char what[96];
      std::snprintf(what, sizeof what, "%s call %d (inputs of salt %d)", mode, c, c % kInputs + 1);
      wrongCalls +=
          !checked(comm, CollOp::kAllReduce, type, RedOp::kSum, 0, kCount, inputs[c % kInputs], out[c].get(), what);
    }
    std::printf("ok many-piece sums %s: %d of %d calls wrong\n", mode, wrongCalls, kCalls);
  };
  calls();
  if (!synced(comm, stream, "eager sums")) return;
  checkAll("eager");
  cudaGraphExec_t exec = captured(stream, calls);
  if (!exec) return;
  for (int replay = 0; replay < 2; ++replay) {
    // Cleared first: an element the replay did not write must not pass as the last one's.
    for (DeviceBuffer& b : out) cudaMemsetAsync(b.get(), 0xff, b.size(), stream);
    WORKER_CHECK(cudaGraphLaunch(exec, stream) == cudaSuccess, "graph launch");
    if (!synced(comm, stream, "graph replay")) break;
    checkAll(replay == 0 ? "graph" : "graph again");
  }
  cudaGraphExecDestroy(exec);
}

namespace {

// A send or receive buffer: cudaMalloc's, or cuMem memory in 20 MiB chunks, as PyTorch's
// expandable segments map theirs (a registration then spans several segments, each passed to
// the peers as a descriptor of its own).
struct WorkerBuffer {
  DeviceBuffer plain;
  std::unique_ptr<vmm::ShareableAllocation> cuMem;
  Status allocate(int device, std::size_t bytes, bool inCuMem) {
    if (!inCuMem) return plain.allocate(device, bytes);
    Result<std::unique_ptr<vmm::ShareableAllocation>> made = vmm::ShareableAllocation::create(device, bytes, 20u << 20);
    if (!made.isOk()) return made.status();
    cuMem = std::move(made.value());
    return Status::ok();
  }
  void* get() const { return cuMem ? cuMem->get() : plain.get(); }
  std::uint8_t* bytes() const { return static_cast<std::uint8_t*>(get()); }
  std::size_t size() const { return cuMem ? cuMem->bytes() : plain.size(); }
};

}  // namespace

void largeCallsOnFreshInputs(RankCommunicator& comm, cudaStream_t stream, bool registered, bool cuMem) {
  const int n = comm.ranks(), rank = comm.rank(), device = comm.device();
  struct Size {
    DataType type;
    std::size_t count;
    std::size_t offset;  // bytes into the buffers
    bool inPlace;
    bool offsetOnOddRanksOnly = false;
  };
  // Two pieces and an odd tail; nine pieces of 4 MiB; the same in bfloat16 and in place; the
  // first size 4 bytes off the 16-byte alignment (staged where a rank's buffers are not
  // 8-byte aligned). Then ranks of different alignment: the even ones move 16-byte units, the
  // odd ones single elements, and their blocks must still pair the same bytes (the regular
  // one-shot variant once cut a piece by its own units: a block read bytes its peer's block
  // had not written). A count whose bytes are not whole 8-byte words keeps every rank off the
  // 128-byte lines; 4 MiB on 4 ranks is beyond their slot.
  const Size sizes[] = {
      {DataType::kFloat32, (1u << 20) + 5, 0, false},       {DataType::kFloat32, (1u << 20) + 5, 4, false},
      {DataType::kFloat32, (1u << 20) + 1, 4, false, true}, {DataType::kFloat32, 1u << 20, 4, false, true},
      {DataType::kFloat32, (9u << 20) + 3, 0, false},       {DataType::kBFloat16, (9u << 20) + 1, 0, true}};
  const std::size_t most = static_cast<std::size_t>(n) * ((9u << 20) + 8) * 4 + 64;
  const std::size_t allReduce256 = 64u << 20;  // floats: 256 MiB
  WorkerBuffer send, recv;
  if (!ok(send.allocate(device, std::max(most, allReduce256 * 4), cuMem), "send buffer") ||
      !ok(recv.allocate(device, std::max(most, allReduce256 * 4), cuMem), "receive buffer"))
    return;
  if (registered && (!ok(comm.registerBuffer(send.get(), send.size()), "register send") ||
                     !ok(comm.registerBuffer(recv.get(), recv.size()), "register recv")))
    return;
  if (registered) {
    const char* how = comm.registrationMechanism(send.get());
    const std::string want = n == 1 ? "none" : cuMem ? "cumem-fd" : "cuda-ipc";
    WORKER_CHECK(how && how == want, "registered as %s, not %s", how ? how : "nothing", want.c_str());
    std::printf("registered by %s\n", how ? how : "nothing");
  }
  const CollOp ops[] = {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kBroadcast,
                        CollOp::kReduce,    CollOp::kAllToAll,  CollOp::kSendRecv};
  unsigned call = 0;
  // One call of `op` on inputs of a salt the previous call did not use: eager, or captured
  // and replayed on fresh inputs; false where it went wrong.
  auto one = [&](CollOp op, const Size& z, bool graph) {
    const unsigned salt = 1 + call++ % 16;
    const int root = static_cast<int>(call % n);
    const RedOp redop = op == CollOp::kReduce ? RedOp::kMax : RedOp::kSum;
    const std::size_t offset = z.offsetOnOddRanksOnly && rank % 2 == 0 ? 0 : z.offset;
    InPlacePointers at{send.bytes() + offset, recv.bytes() + offset};
    if (z.inPlace && op != CollOp::kSendRecv) at = inPlacePointers(op, at.send, at.recv, z.count, z.type, rank);
    char what[160];
    std::snprintf(what, sizeof what, "%s %s %s count %zu +%zu%s%s%s%s, %d ranks", graph ? "graph" : "eager",
                  collOpName(op), dataTypeName(z.type), z.count, offset,
                  z.offsetOnOddRanksOnly ? " (odd ranks only)" : "", z.inPlace ? " in place" : "",
                  registered ? " registered" : "", op == CollOp::kReduce || op == CollOp::kBroadcast ? " rooted" : "",
                  n);
    const auto inputs = inputsOf(op, z.type, z.count, n, salt);
    auto launch = [&] { ok(runCollective(comm, op, at.send, at.recv, z.count, z.type, redop, root, stream), what); };
    cudaGraphExec_t exec = graph ? captured(stream, launch) : nullptr;
    if (graph && !exec) return false;
    // Written after the capture: the graph reads whatever the buffers hold when it runs. A
    // graph runs twice, each time on these inputs: what its first run leaves behind (flags
    // set back, counters) must serve the second.
    for (int replay = 0; replay < (exec ? 2 : 1); ++replay) {
      cudaMemset(recv.get(), 0xff, recv.size());
      cudaMemcpy(at.send, inputs[rank].data(), inputs[rank].size(), cudaMemcpyHostToDevice);
      cudaDeviceSynchronize();
      if (exec) {
        WORKER_CHECK(cudaGraphLaunch(exec, stream) == cudaSuccess, "%s: launch", what);
        cudaStreamSynchronize(stream);
      } else {
        launch();
      }
    }
    if (exec) cudaGraphExecDestroy(exec);
    if (!synced(comm, stream, what) || !checked(comm, op, z.type, redop, root, z.count, inputs, at.recv, what))
      return false;
    // An out-of-place call leaves its input as it was, and so does a reduce on the ranks that
    // are not its root, in place or not (they write no output).
    if (z.inPlace && !(op == CollOp::kReduce && rank != root)) return true;
    return inputKept(at.send, inputs[rank], what);
  };
  int wrong = 0, made = 0;
  for (CollOp op : ops)
    for (const Size& z : sizes)
      for (bool graph : {false, true}) {
        // Registered: the operations that read the peers' buffers directly.
        if (registered && (op == CollOp::kAllToAll || op == CollOp::kSendRecv)) continue;
        wrong += !one(op, z, graph);
        ++made;
      }
  for (bool graph : {false, true}) {
    wrong += !one(CollOp::kAllReduce, {DataType::kFloat32, allReduce256, 0, false}, graph);
    ++made;
  }
  std::printf("ok large calls%s%s: %d of %d wrong\n", registered ? " registered" : "", cuMem ? " in cuMem" : "", wrong,
              made);
  if (registered) {
    ok(comm.deregisterBuffer(send.get()), "deregister send");
    ok(comm.deregisterBuffer(recv.get()), "deregister recv");
  }
}

}  // namespace gpupeer
