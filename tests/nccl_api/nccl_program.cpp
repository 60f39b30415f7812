// An NCCL program that knows nothing of gpupeer, for the GPU tests of libgpupeer_nccl.so: one
// process per rank (forked here), every collective and send/recv at sizes from 8 B to
// --max-bytes plus odd ones, eager and captured in a CUDA graph, a group mixing collectives and
// sends, and a communicator made by ncclCommSplit; each result checked element by element
// against the value it must have. Run it as is (NCCL alone) or with LD_PRELOAD naming
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
  Rank(int rank, int ranks, ncclComm_t comm, cudaStream_t stream)
      : rank(rank), ranks(ranks), comm_(comm), stream_(stream) {}

  // One call of `op` with `count` elements (NCCL's count argument), eager or in a graph.
  void run(Op op, std::size_t count, bool graph, int root) {
    const std::size_t in = (op == Op::kReduceScatter || op == Op::kAllToAll) ? count * ranks : count;
    const std::size_t out = (op == Op::kAllGather || op == Op::kAllToAll) ? count * ranks : count;
    std::vector<float> host(in);
    for (std::size_t i = 0; i < in; ++i) host[i] = value(rank, i);
    float *send = nullptr, *recv = nullptr;
    CHECK_CUDA(cudaMalloc(&send, in * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&recv, out * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(send, host.data(), in * sizeof(float), cudaMemcpyHostToDevice));
    // NaN: an element not written is wrong. On the operation's stream and waited for: the stream
    // is non-blocking, so a plain cudaMemset (legacy stream) would not be ordered before it.
    CHECK_CUDA(cudaMemsetAsync(recv, 0xff, out * sizeof(float), stream_));
    CHECK_CUDA(cudaStreamSynchronize(stream_));
    cudaGraph_t g = nullptr;
    if (graph) CHECK_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    enqueue(op, send, recv, count, root);
    if (graph) {
      CHECK_CUDA(cudaStreamEndCapture(stream_, &g));
      cudaGraphExec_t exec = nullptr;
      CHECK_CUDA(cudaGraphInstantiate(&exec, g, 0));
      CHECK_CUDA(cudaGraphLaunch(exec, stream_));
      CHECK_CUDA(cudaStreamSynchronize(stream_));
      cudaGraphExecDestroy(exec);
      cudaGraphDestroy(g);
    }
    CHECK_CUDA(cudaStreamSynchronize(stream_));
    std::vector<float> got(out);
    CHECK_CUDA(cudaMemcpy(got.data(), recv, out * sizeof(float), cudaMemcpyDeviceToHost));
    long wrong = 0;
    std::size_t first = out;
    if (op != Op::kReduce || rank == root)
      for (std::size_t i = 0; i < out; ++i)
        if (got[i] != expected(op, count, root, i)) {
          ++wrong;
          first = std::min(first, i);
        }
    ++tally.checks;
    tally.wrong += wrong;
    if (wrong > 0)
      std::fprintf(stderr, "rank %d: %s of %zu elements (%s, root %d): %ld wrong, the first at %zu: %g, not %g\n", rank,
                   opName(op), count, graph ? "graph" : "eager", root, wrong, first, static_cast<double>(got[first]),
                   static_cast<double>(expected(op, count, root, first)));
    cudaFree(send);
    cudaFree(recv);
  }

  // A group with a small all-reduce, a ring of sends and receives and an all-gather, checked.
  void mixedGroup(std::size_t count) {
    float *a = nullptr, *s = nullptr, *r = nullptr, *g = nullptr;
    CHECK_CUDA(cudaMalloc(&a, 64 * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&s, count * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&r, count * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&g, count * ranks * sizeof(float)));
    std::vector<float> host(std::max<std::size_t>(count, 64));
    for (std::size_t i = 0; i < host.size(); ++i) host[i] = value(rank, i);
    CHECK_CUDA(cudaMemcpy(a, host.data(), 64 * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(s, host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_NCCL(ncclGroupStart());
    CHECK_NCCL(ncclAllReduce(a, a, 64, ncclFloat32, ncclSum, comm_, stream_));
    CHECK_NCCL(ncclSend(s, count, ncclFloat32, (rank + 1) % ranks, comm_, stream_));
    CHECK_NCCL(ncclRecv(r, count, ncclFloat32, (rank + ranks - 1) % ranks, comm_, stream_));
    CHECK_NCCL(ncclAllGather(s, g, count, ncclFloat32, comm_, stream_));
    CHECK_NCCL(ncclGroupEnd());
    CHECK_CUDA(cudaStreamSynchronize(stream_));
    std::vector<float> ga(64), gr(count), gg(count * ranks);
    CHECK_CUDA(cudaMemcpy(ga.data(), a, ga.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(gr.data(), r, gr.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(gg.data(), g, gg.size() * sizeof(float), cudaMemcpyDeviceToHost));
    long wrong = 0;
    for (std::size_t i = 0; i < 64; ++i) wrong += ga[i] != expected(Op::kAllReduce, 64, 0, i);
    for (std::size_t i = 0; i < count; ++i) wrong += gr[i] != expected(Op::kSendRecv, count, 0, i);
    for (std::size_t i = 0; i < count * ranks; ++i) wrong += gg[i] != expected(Op::kAllGather, count, 0, i);
    tally.checks += 3;
    tally.wrong += wrong;
    if (wrong > 0) std::fprintf(stderr, "rank %d: mixed group of %zu elements: %ld wrong\n", rank, count, wrong);
    cudaFree(a);
    cudaFree(s);
    cudaFree(r);
    cudaFree(g);
  }

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
};

// nccl-tests' sizes (the buffer every rank ends with), by powers of 4 and odd ones.
std::vector<std::size_t> sizes(std::size_t maxBytes) {
  std::vector<std::size_t> all;
  for (std::size_t b = 8; b <= maxBytes; b *= 4) all.push_back(b);
  for (std::size_t b : {12ul, 1000ul, 49380ul, (3ul << 20) + 24, (5ul << 20) + 4})
    if (b <= maxBytes) all.push_back(b);
  return all;
}

// Every check of one rank, its failures counted in r.tally.
void run(Rank& r, const Options& o, ncclComm_t comm, cudaStream_t stream) {
  const int rank = r.rank;
  Tally& tally = r.tally;
  const Op ops[] = {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kBroadcast,
                    Op::kReduce,    Op::kAllToAll,  Op::kSendRecv};
  int call = 0;
  for (int round = 0; round < o.repeat; ++round)
    for (std::size_t bytes : sizes(o.maxBytes))
      for (Op op : ops)
        for (bool graph : {false, true}) {
          if (!o.only.empty() && o.only != opName(op)) continue;
          // The size counts the buffer every rank ends with; NCCL's count is per rank for some.
          std::size_t count = bytes / sizeof(float);
          if (op == Op::kAllGather || op == Op::kReduceScatter || op == Op::kAllToAll) count /= o.ranks;
          if (count == 0) continue;
          r.run(op, count, graph, call++ % o.ranks);
        }
  for (std::size_t count : {16ul, 4096ul, 1ul << 20}) r.mixedGroup(count);
  // A communicator made by splitting: even and odd ranks.
  ncclComm_t half = nullptr;
  CHECK_NCCL(ncclCommSplit(comm, rank % 2, rank, &half, nullptr));
  if (half != nullptr) {
    int halfRanks = 0, halfRank = 0;
    CHECK_NCCL(ncclCommCount(half, &halfRanks));
    CHECK_NCCL(ncclCommUserRank(half, &halfRank));
    Rank h(halfRank, halfRanks, half, stream);
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
  Rank r(rank, o.ranks, comm, stream);
  run(r, o, comm, stream);
  r.tally.failedCalls += tally.failedCalls;
  std::printf("rank %d of %d: %ld checks, %ld wrong, %ld failed calls\n", rank, o.ranks, r.tally.checks, r.tally.wrong,
              r.tally.failedCalls);
  return r.tally.wrong == 0 && r.tally.failedCalls == 0 ? 0 : 1;
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
    } else {
      std::fprintf(stderr, "usage: %s [--ranks N] [--max-bytes BYTES] [--only OPERATION] [--repeat N]\n", argv[0]);
      return 2;
    }
  }
  if (o.ranks < 1 || o.ranks > 64 || o.maxBytes < 8 || o.repeat < 1) {
    std::fprintf(stderr, "--ranks from 1 to 64, --max-bytes of at least 8 and --repeat of at least 1\n");
    return 2;
  }
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
