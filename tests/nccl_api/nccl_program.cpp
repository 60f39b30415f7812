// An NCCL program that knows nothing of gpupeer, for the GPU tests of libgpupeer_nccl.so: one
// process per rank (forked here; or with --one-process, one thread driving every rank through
// groups, as nccl-tests' -g N does), every collective and send/recv at sizes from 8 B to
// --max-bytes plus odd ones, eager and captured in a CUDA graph, a group mixing collectives and
// sends, and a communicator made by ncclCommSplit; each result checked element by element
// against the value it must have. --hosts H gives the forked ranks the identities of H hosts, so
// that one machine tests a communicator spanning hosts. Run it as is (NCCL alone) or with LD_PRELOAD naming
// libgpupeer_nccl.so. Prints one line per rank and exits 1 if any element was wrong or any call
// failed.

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Options {
  int ranks = 2;
  std::size_t maxBytes = 256u << 20;
  std::string only;  ///< one operation's name (opName), to repeat it
  int repeat = 1;
  bool oneProcess = false;  ///< one process drives every rank (ncclCommInitAll)
  /// Host identities (NCCL_HOSTID, GPUPEER_HOST_ID) of this many hosts, ranks in blocks, so that
  /// one machine acts as several: NCCL's traffic between them goes over its network transport.
  int hosts = 1;
};

struct Tally {
  long checks = 0;
  long wrong = 0;
  long failedCalls = 0;
};

#define CHECK_NCCL(call)                                                                         \
  do {                                                                                           \
    ncclResult_t r_ = (call);                                                                    \
    if (r_ != ncclSuccess) {                                                                     \
      std::fprintf(stderr, "rank %d: %s failed: %s (%s)\n", rank, #call, ncclGetErrorString(r_), \
                   ncclGetLastError(nullptr));                                                   \
      ++tally.failedCalls;                                                                       \
    }                                                                                            \
  } while (0)

#define CHECK_CUDA(call)                                                                     \
  do {                                                                                       \
    cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "rank %d: %s failed: %s\n", rank, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                          \
    }                                                                                        \
  } while (0)

// Small integers, so every sum is exact in float whatever the order.
float value(int rank, std::size_t i) { return static_cast<float>((rank + 1) * 3 + static_cast<int>(i % 101)); }

enum class Op { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };
const char* opName(Op op) {
  static const char* names[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                "reduce",     "alltoall",   "sendrecv"};
  return names[static_cast<int>(op)];
}

class Rank {
 public:
  Rank(int rank, int ranks, ncclComm_t comm, cudaStream_t stream, int device)
      : rank(rank), ranks(ranks), comm_(comm), stream_(stream), device_(device) {}

  // One call's buffers: the input filled, the output NaN.
  struct Call {
    Op op;
    std::size_t count;
    int root;
    std::size_t out;
    float* send;
    float* recv;
  };

  // One call of `op` with `count` elements (NCCL's count argument), eager or in a graph.
  void run(Op op, std::size_t count, bool graph, int root) {
    Call c = prepare(op, count, root);
    cudaGraph_t g = nullptr;
    if (graph) CHECK_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    enqueue(c);
    if (graph) {
      CHECK_CUDA(cudaStreamEndCapture(stream_, &g));
      cudaGraphExec_t exec = nullptr;
      CHECK_CUDA(cudaGraphInstantiate(&exec, g, 0));
      CHECK_CUDA(cudaGraphLaunch(exec, stream_));
      CHECK_CUDA(cudaStreamSynchronize(stream_));
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(g);
    }
    check(c, graph ? "graph" : "eager");
  }

  Call prepare(Op op, std::size_t count, int root) {
    CHECK_CUDA(cudaSetDevice(device_));
    const std::size_t in = (op == Op::kReduceScatter || op == Op::kAllToAll) ? count * ranks : count;
    const std::size_t out = (op == Op::kAllGather || op == Op::kAllToAll) ? count * ranks : count;
    std::vector<float> host(in);
    for (std::size_t i = 0; i < in; ++i) host[i] = value(rank, i);
    Call c{op, count, root, out, nullptr, nullptr};
    CHECK_CUDA(cudaMalloc(&c.send, in * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&c.recv, out * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(c.send, host.data(), in * sizeof(float), cudaMemcpyHostToDevice));
    // NaN: an element not written is wrong. On the operation's stream and waited for: the stream
    // is non-blocking, so a plain cudaMemset (legacy stream) would not be ordered before it.
    CHECK_CUDA(cudaMemsetAsync(c.recv, 0xff, out * sizeof(float), stream_));
    CHECK_CUDA(cudaStreamSynchronize(stream_));
    return c;
  }

  // Waits for the call, compares every element and frees the buffers.
  void check(const Call& c, const char* mode) {
    CHECK_CUDA(cudaSetDevice(device_));
    CHECK_CUDA(cudaStreamSynchronize(stream_));
    std::vector<float> got(c.out);
    CHECK_CUDA(cudaMemcpy(got.data(), c.recv, c.out * sizeof(float), cudaMemcpyDeviceToHost));
    long wrong = 0;
    std::size_t first = c.out;
    if (c.op != Op::kReduce || rank == c.root)
      for (std::size_t i = 0; i < c.out; ++i)
        if (got[i] != expected(c.op, c.count, c.root, i)) {
          ++wrong;
          first = std::min(first, i);
        }
    ++tally.checks;
    tally.wrong += wrong;
    if (wrong > 0)
      std::fprintf(stderr, "rank %d: %s of %zu elements (%s, root %d): %ld wrong, the first at %zu: %g, not %g\n", rank,
                   opName(c.op), c.count, mode, c.root, wrong, first, static_cast<double>(got[first]),
                   static_cast<double>(expected(c.op, c.count, c.root, first)));
    cudaFree(c.send);
    cudaFree(c.recv);
  }

  void enqueue(const Call& c) { enqueue(c.op, c.send, c.recv, c.count, c.root); }

  // A group with a small all-reduce, a ring of sends and receives (`twice`: two messages to the
  // next rank, received in order) and an all-gather, checked.
  void mixedGroup(std::size_t count, bool twice) {
    Mixed m = prepareMixed(count, twice);
    CHECK_NCCL(ncclGroupStart());
    enqueueMixed(m);
    CHECK_NCCL(ncclGroupEnd());
    checkMixed(m);
  }

  struct Mixed {
    std::size_t count;
    float *a, *s, *r, *g;
    float* second;  ///< the second message's receive buffer, where `twice`
  };

  Mixed prepareMixed(std::size_t count, bool twice) {
    CHECK_CUDA(cudaSetDevice(device_));
    Mixed m{count, nullptr, nullptr, nullptr, nullptr, nullptr};
    CHECK_CUDA(cudaMalloc(&m.a, 64 * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&m.s, count * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&m.r, count * sizeof(float)));
    if (twice) CHECK_CUDA(cudaMalloc(&m.second, count * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&m.g, count * ranks * sizeof(float)));
    std::vector<float> host(std::max<std::size_t>(count, 64));
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = value(rank, i);
    CHECK_CUDA(cudaMemcpy(m.a, host.data(), 64 * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(m.s, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    return m;
  }

  // Inside the caller's group.
  void enqueueMixed(const Mixed& m) {
    CHECK_NCCL(ncclAllReduce(m.a, m.a, 64, ncclFloat32, ncclSum, comm_, stream_));
    CHECK_NCCL(ncclSend(m.s, m.count, ncclFloat32, (rank + 1) % ranks, comm_, stream_));
    CHECK_NCCL(ncclRecv(m.r, m.count, ncclFloat32, (rank + ranks - 1) % ranks, comm_, stream_));
    if (m.second != nullptr) {
      CHECK_NCCL(ncclSend(m.s, m.count, ncclFloat32, (rank + 1) % ranks, comm_, stream_));
      CHECK_NCCL(ncclRecv(m.second, m.count, ncclFloat32, (rank + ranks - 1) % ranks, comm_, stream_));
    }
    CHECK_NCCL(ncclAllGather(m.s, m.g, m.count, ncclFloat32, comm_, stream_));
  }

  void checkMixed(const Mixed& m) {
    CHECK_CUDA(cudaSetDevice(device_));
    CHECK_CUDA(cudaStreamSynchronize(stream_));
    const std::size_t count = m.count;
    std::vector<float> ga(64), gr(count), gg(count * ranks);
    CHECK_CUDA(cudaMemcpy(ga.data(), m.a, ga.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(gr.data(), m.r, gr.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(gg.data(), m.g, gg.size() * sizeof(float), cudaMemcpyDeviceToHost));
    long wrong = 0;
    for (std::size_t i = 0; i < 64; ++i) wrong += ga[i] != expected(Op::kAllReduce, 64, 0, i);
    for (std::size_t i = 0; i < count; ++i) wrong += gr[i] != expected(Op::kSendRecv, count, 0, i);
    for (std::size_t i = 0; i < count * ranks; ++i) wrong += gg[i] != expected(Op::kAllGather, count, 0, i);
    tally.checks += 3;
    if (m.second != nullptr) {
      CHECK_CUDA(cudaMemcpy(gr.data(), m.second, gr.size() * sizeof(float), cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < count; ++i) wrong += gr[i] != expected(Op::kSendRecv, count, 0, i);
      ++tally.checks;
      cudaFree(m.second);
    }
    tally.wrong += wrong;
    if (wrong > 0) std::fprintf(stderr, "rank %d: mixed group of %zu elements: %ld wrong\n", rank, count, wrong);
    cudaFree(m.a);
    cudaFree(m.s);
    cudaFree(m.r);
    cudaFree(m.g);
  }

  cudaStream_t stream() const { return stream_; }
  int device() const { return device_; }

  int rank;
  int ranks;
  Tally tally;

 private:
  void enqueue(Op op, const float* send, float* recv, std::size_t count, int root) {
    switch (op) {
      case Op::kAllReduce: CHECK_NCCL(ncclAllReduce(send, recv, count, ncclFloat32, ncclSum, comm_, stream_)); break;
      case Op::kAllGather: CHECK_NCCL(ncclAllGather(send, recv, count, ncclFloat32, comm_, stream_)); break;
      case Op::kReduceScatter:
        CHECK_NCCL(ncclReduceScatter(send, recv, count, ncclFloat32, ncclSum, comm_, stream_));
        break;
      case Op::kBroadcast: CHECK_NCCL(ncclBroadcast(send, recv, count, ncclFloat32, root, comm_, stream_)); break;
      case Op::kReduce: CHECK_NCCL(ncclReduce(send, recv, count, ncclFloat32, ncclSum, root, comm_, stream_)); break;
      case Op::kAllToAll: CHECK_NCCL(ncclAlltoAll(send, recv, count, ncclFloat32, comm_, stream_)); break;
      case Op::kSendRecv:
        CHECK_NCCL(ncclGroupStart());
        CHECK_NCCL(ncclSend(send, count, ncclFloat32, (rank + 1) % ranks, comm_, stream_));
        CHECK_NCCL(ncclRecv(recv, count, ncclFloat32, (rank + ranks - 1) % ranks, comm_, stream_));
        CHECK_NCCL(ncclGroupEnd());
        break;
    }
  }

  float expected(Op op, std::size_t count, int root, std::size_t i) const {
    auto sum = [&](std::size_t at) {
      float s = 0;
      for (int r = 0; r < ranks; ++r) s += value(r, at);
      return s;
    };
    switch (op) {
      case Op::kAllReduce:
      case Op::kReduce: return sum(i);
      case Op::kAllGather: return value(static_cast<int>(i / count), i % count);
      case Op::kReduceScatter: return sum(rank * count + i);
      case Op::kBroadcast: return value(root, i);
      case Op::kAllToAll: return value(static_cast<int>(i / count), rank * count + i % count);
      case Op::kSendRecv: return value((rank + ranks - 1) % ranks, i);
    }
    return 0;
  }

  ncclComm_t comm_;
  cudaStream_t stream_;
  int device_;
};

// nccl-tests' sizes (the buffer every rank ends with), by powers of 4 and odd ones.
std::vector<std::size_t> sizes(std::size_t maxBytes) {
  std::vector<std::size_t> all;
  for (std::size_t b = 8; b <= maxBytes; b *= 4) all.push_back(b);
  for (std::size_t b : {12ul, 1000ul, 49380ul, (3ul << 20) + 24, (5ul << 20) + 4})
    if (b <= maxBytes) all.push_back(b);
  return all;
}

// How a check's calls run: eager, in a CUDA graph per stream (per rank), or, where one process
// drives every rank, in one graph over all ranks' streams.
enum class Mode { kEager, kGraph, kOneGraph };
const char* modeName(Mode m) { return m == Mode::kEager ? "eager" : m == Mode::kGraph ? "graph" : "one graph"; }

struct Check {
  Op op;
  std::size_t count;
  Mode mode;
  int root;
};

// Every operation at every size in each of `modes`, roots taking turns.
std::vector<Check> checks(const Options& o, const std::vector<Mode>& modes) {
  const Op ops[] = {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kBroadcast,
                    Op::kReduce,    Op::kAllToAll,  Op::kSendRecv};
  std::vector<Check> all;
  int call = 0;
  for (int round = 0; round < o.repeat; ++round)
    for (std::size_t bytes : sizes(o.maxBytes))
      for (Op op : ops)
        for (Mode mode : modes) {
          if (!o.only.empty() && o.only != opName(op)) continue;
          // The size counts the buffer every rank ends with; NCCL's count is per rank for some.
          std::size_t count = bytes / sizeof(float);
          if (op == Op::kAllGather || op == Op::kReduceScatter || op == Op::kAllToAll) count /= o.ranks;
          if (count == 0) continue;
          all.push_back({op, count, mode, call++ % o.ranks});
        }
  return all;
}

// Every check of one rank, its failures counted in r.tally.
void run(Rank& r, const Options& o, ncclComm_t comm, cudaStream_t stream) {
  const int rank = r.rank;
  Tally& tally = r.tally;
  for (const Check& c : checks(o, {Mode::kEager, Mode::kGraph})) r.run(c.op, c.count, c.mode == Mode::kGraph, c.root);
  for (std::size_t count : {16ul, 4096ul, 1ul << 20}) r.mixedGroup(count, count == 4096);
  // A communicator made by splitting: even and odd ranks.
  ncclComm_t half = nullptr;
  CHECK_NCCL(ncclCommSplit(comm, rank % 2, rank, &half, nullptr));
  if (half != nullptr) {
    int halfRanks = 0, halfRank = 0;
    CHECK_NCCL(ncclCommCount(half, &halfRanks));
    CHECK_NCCL(ncclCommUserRank(half, &halfRank));
    Rank h(halfRank, halfRanks, half, stream, r.device());
    for (std::size_t count : {4ul, 4096ul, 1ul << 22}) h.run(Op::kAllReduce, count, false, 0);
    tally.checks += h.tally.checks;
    tally.wrong += h.tally.wrong;
    tally.failedCalls += h.tally.failedCalls;
    CHECK_NCCL(ncclCommDestroy(half));
  }
  ncclResult_t async = ncclSuccess;
  CHECK_NCCL(ncclCommGetAsyncError(comm, &async));
  if (async != ncclSuccess) ++tally.failedCalls;
  CHECK_NCCL(ncclCommDestroy(comm));
}

int runRank(int rank, const Options& o, const ncclUniqueId& id) {
  int devices = 0;
  CHECK_CUDA(cudaGetDeviceCount(&devices));
  CHECK_CUDA(cudaSetDevice(rank % devices));
  ncclComm_t comm = nullptr;
  Tally tally;
  CHECK_NCCL(ncclCommInitRank(&comm, o.ranks, id, rank));
  if (tally.failedCalls > 0) return 1;
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Rank r(rank, o.ranks, comm, stream, rank % devices);
  run(r, o, comm, stream);
  r.tally.failedCalls += tally.failedCalls;
  std::printf("rank %d of %d: %ld checks, %ld wrong, %ld failed calls\n", rank, o.ranks, r.tally.checks, r.tally.wrong,
              r.tally.failedCalls);
  return r.tally.wrong == 0 && r.tally.failedCalls == 0 ? 0 : 1;
}

// The calls of `check` on every rank in one group, in its mode.
void runTogether(std::vector<Rank>& ranks, const Check& check, std::vector<cudaEvent_t>& events) {
  const int rank = 0;  // for CHECK_NCCL's and CHECK_CUDA's messages
  Tally& tally = ranks[0].tally;
  std::vector<Rank::Call> calls;
  for (Rank& r : ranks) calls.push_back(r.prepare(check.op, check.count, check.root));
  const int n = static_cast<int>(ranks.size());
  // A graph per stream, as nccl-tests' -G makes them (thread-local: NCCL may connect peers
  // inside the capture, which global mode forbids); or one over all, forked from rank 0's.
  if (check.mode == Mode::kGraph)
    for (Rank& r : ranks) CHECK_CUDA(cudaStreamBeginCapture(r.stream(), cudaStreamCaptureModeThreadLocal));
  if (check.mode == Mode::kOneGraph) {
    CHECK_CUDA(cudaStreamBeginCapture(ranks[0].stream(), cudaStreamCaptureModeGlobal));
    CHECK_CUDA(cudaEventRecord(events[0], ranks[0].stream()));
    for (int r = 1; r < n; ++r) CHECK_CUDA(cudaStreamWaitEvent(ranks[r].stream(), events[0], 0));
  }
  CHECK_NCCL(ncclGroupStart());
  for (int r = 0; r < n; ++r) ranks[r].enqueue(calls[r]);
  CHECK_NCCL(ncclGroupEnd());
  std::vector<cudaGraph_t> graphs;
  if (check.mode == Mode::kGraph) {
    for (Rank& r : ranks) {
      cudaGraph_t g = nullptr;
      CHECK_CUDA(cudaStreamEndCapture(r.stream(), &g));
      graphs.push_back(g);
    }
  } else if (check.mode == Mode::kOneGraph) {
    for (int r = 1; r < n; ++r) {
      CHECK_CUDA(cudaEventRecord(events[r], ranks[r].stream()));
      CHECK_CUDA(cudaStreamWaitEvent(ranks[0].stream(), events[r], 0));
    }
    cudaGraph_t g = nullptr;
    CHECK_CUDA(cudaStreamEndCapture(ranks[0].stream(), &g));
    graphs.push_back(g);
  }
  // Every graph launched before any is waited for: each rank's kernels wait for the others'.
  std::vector<cudaGraphExec_t> execs(graphs.size());
  for (std::size_t k = 0; k < graphs.size(); ++k) {
    CHECK_CUDA(cudaGraphInstantiate(&execs[k], graphs[k], 0));
    CHECK_CUDA(cudaGraphLaunch(execs[k], ranks[k].stream()));
  }
  for (std::size_t k = 0; k < graphs.size(); ++k) {
    CHECK_CUDA(cudaStreamSynchronize(ranks[k].stream()));
    cudaGraphExecDestroy(execs[k]);
    cudaGraphDestroy(graphs[k]);
  }
  for (int r = 0; r < n; ++r) ranks[r].check(calls[r], modeName(check.mode));
}

// One process drives every rank (ncclCommInitAll over the first --ranks GPUs): each check's
// calls of all ranks in one group, eager, a graph per stream and one graph over all streams;
// then the mixed groups, all ranks in each (one with two messages to the next rank: not the
// shift gpupeer's one call takes, so those sends go to NCCL beside gpupeer's collectives).
int runOneProcess(const Options& o) {
  const int rank = 0;
  Tally tally;
  int devices = 0;
  CHECK_CUDA(cudaGetDeviceCount(&devices));
  if (devices < o.ranks) {
    std::fprintf(stderr, "--one-process --ranks %d needs %d GPUs, %d visible\n", o.ranks, o.ranks, devices);
    return 2;
  }
  std::vector<ncclComm_t> comms(o.ranks);
  std::vector<int> gpus(o.ranks);
  for (int r = 0; r < o.ranks; ++r) gpus[r] = r;
  CHECK_NCCL(ncclCommInitAll(comms.data(), o.ranks, gpus.data()));
  if (tally.failedCalls > 0) return 1;
  std::vector<Rank> ranks;
  std::vector<cudaEvent_t> events(o.ranks);
  for (int r = 0; r < o.ranks; ++r) {
    CHECK_CUDA(cudaSetDevice(r));
    cudaStream_t stream = nullptr;
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK_CUDA(cudaEventCreateWithFlags(&events[r], cudaEventDisableTiming));
    ranks.emplace_back(r, o.ranks, comms[r], stream, r);
  }
  for (const Check& c : checks(o, {Mode::kEager, Mode::kGraph, Mode::kOneGraph})) runTogether(ranks, c, events);
  for (std::size_t count : {16ul, 4096ul, 1ul << 20}) {
    std::vector<Rank::Mixed> mixed;
    for (Rank& r : ranks) mixed.push_back(r.prepareMixed(count, count == 4096));
    CHECK_NCCL(ncclGroupStart());
    for (int r = 0; r < o.ranks; ++r) ranks[r].enqueueMixed(mixed[r]);
    CHECK_NCCL(ncclGroupEnd());
    for (int r = 0; r < o.ranks; ++r) ranks[r].checkMixed(mixed[r]);
  }
  int failed = 0;
  for (Rank& r : ranks) {
    ncclResult_t async = ncclSuccess;
    CHECK_NCCL(ncclCommGetAsyncError(comms[r.rank], &async));
    if (async != ncclSuccess) ++tally.failedCalls;
  }
  for (ncclComm_t comm : comms) CHECK_NCCL(ncclCommDestroy(comm));
  ranks[0].tally.failedCalls += tally.failedCalls;
  for (Rank& r : ranks) {
    std::printf("rank %d of %d: %ld checks, %ld wrong, %ld failed calls\n", r.rank, o.ranks, r.tally.checks,
                r.tally.wrong, r.tally.failedCalls);
    failed += r.tally.wrong > 0 || r.tally.failedCalls > 0;
  }
  std::printf("%d of %d ranks passed (one process)\n", o.ranks - failed, o.ranks);
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ranks" && i + 1 < argc) {
      o.ranks = std::atoi(argv[++i]);
    } else if (a == "--max-bytes" && i + 1 < argc) {
      o.maxBytes = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--only" && i + 1 < argc) {
      o.only = argv[++i];
    } else if (a == "--repeat" && i + 1 < argc) {
      o.repeat = std::atoi(argv[++i]);
    } else if (a == "--hosts" && i + 1 < argc) {
      o.hosts = std::atoi(argv[++i]);
    } else if (a == "--one-process") {
      o.oneProcess = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--ranks N] [--max-bytes BYTES] [--only OPERATION] [--repeat N] [--hosts H] "
                   "[--one-process]\n",
                   argv[0]);
      return 2;
    }
  }
  if (o.ranks < 1 || o.ranks > 64 || o.maxBytes < 8 || o.repeat < 1) {
    std::fprintf(stderr, "--ranks from 1 to 64, --max-bytes of at least 8 and --repeat of at least 1\n");
    return 2;
  }
  if (o.hosts < 1 || o.hosts > o.ranks || (o.hosts > 1 && o.oneProcess)) {
    std::fprintf(stderr, "--hosts from 1 to the rank count, and not with --one-process (one process is one host)\n");
    return 2;
  }
  if (o.oneProcess) return runOneProcess(o);
  // The id is made in the parent before any CUDA call, then every rank is forked.
  ncclUniqueId id;
  if (ncclGetUniqueId(&id) != ncclSuccess) {
    std::fprintf(stderr, "ncclGetUniqueId failed\n");
    return 1;
  }
  std::vector<pid_t> children;
  for (int rank = 0; rank < o.ranks; ++rank) {
    pid_t pid = fork();
    if (pid == 0) {
      if (o.hosts > 1) {
        const std::string host = "nccl-program-host-" + std::to_string(rank * o.hosts / o.ranks);
        setenv("NCCL_HOSTID", host.c_str(), 1);
        setenv("GPUPEER_HOST_ID", host.c_str(), 1);
      }
      const int code = runRank(rank, o, id);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(code);
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::printf("%d of %d ranks passed\n", o.ranks - failed, o.ranks);
  return failed == 0 ? 0 : 1;
}
