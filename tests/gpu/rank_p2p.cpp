// Point-to-point scenarios of the rank worker: an all-to-all by sends whose group needs more
// blocks than a GPU holds at once, and a receive whose length differs from its send's.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda/device_memory.hpp"
#include "rank_scenarios.hpp"
#include "rank_worker_checks.hpp"

namespace gpupeer {
namespace {

std::uint8_t patternByte(std::size_t i, int from, int to, int round) {
  return static_cast<std::uint8_t>(i * 131 + from * 17 + to * 5 + round * 29 + 1);
}

}  // namespace

void allToAllBySends(RankCommunicator& comm, cudaStream_t stream, std::size_t bytes, int rounds) {
  const int n = comm.ranks(), rank = comm.rank();
  DeviceBuffer send, recv;
  if (!ok(send.allocate(comm.device(), bytes * n), "send buffer") ||
      !ok(recv.allocate(comm.device(), bytes * n), "receive buffer"))
    return;
  std::vector<std::uint8_t> host(bytes * n);
  int wrong = 0;
  for (int round = 0; round < rounds; ++round) {
    for (int to = 0; to < n; ++to)
      for (std::size_t i = 0; i < bytes; ++i) host[to * bytes + i] = patternByte(i, rank, to, round);
    cudaMemcpy(send.get(), host.data(), host.size(), cudaMemcpyHostToDevice);
    cudaMemset(recv.get(), 0, bytes * n);
    cudaDeviceSynchronize();
    // Rank r meets rank r + d as its d-th peer, and that rank meets r as its (n - d)-th: the
    // nearest peers of one rank come last on the other side, and itself last of all.
    ok(comm.groupStart(), "group start");
    for (int d = 1; d <= n; ++d) {
      const int peer = (rank + d) % n;
      ok(comm.send(send.bytes() + peer * bytes, bytes, DataType::kUInt8, peer, stream), "send");
      ok(comm.recv(recv.bytes() + peer * bytes, bytes, DataType::kUInt8, peer, stream), "recv");
    }
    ok(comm.groupEnd(), "group end");
    if (!synced(comm, stream, "all to all by sends")) return;
    cudaMemcpy(host.data(), recv.get(), host.size(), cudaMemcpyDeviceToHost);
    for (int from = 0; from < n; ++from)
      for (std::size_t i = 0; i < bytes; ++i)
        if (host[from * bytes + i] != patternByte(i, from, rank, round)) {
          if (++wrong <= 3) std::printf("FAIL round %d: byte %zu from rank %d differs\n", round, i, from);
        }
  }
  WORKER_CHECK(wrong == 0, "%d wrong bytes", wrong);
  std::printf("ok all to all by sends: %d rounds of %zu bytes per pair, %d wrong\n", rounds, bytes, wrong);
}

void sendRecvLengthsDiffer(RankCommunicator& comm, cudaStream_t stream, std::size_t sent, std::size_t received) {
  const int rank = comm.rank();
  DeviceBuffer buffer;
  if (!ok(buffer.allocate(comm.device(), std::max(sent, received)), "buffer")) return;
  const auto start = std::chrono::steady_clock::now();
  ok(rank == 0 ? comm.send(buffer.get(), sent, DataType::kUInt8, 1, stream)
               : comm.recv(buffer.get(), received, DataType::kUInt8, 0, stream),
     "enqueue");
  cudaStreamSynchronize(stream);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const Status e = comm.checkError();
  // The receiver names both lengths at once; the sender learns it only where its send waits for
  // the receiver (more than two slots), as a timeout naming it.
  const bool waits = sent > (std::size_t{8} << 20);
  const std::string named =
      rank == 1 ? "receives " + std::to_string(received) + " bytes from rank 0, whose send has " + std::to_string(sent)
                : "for rank 1";
  if (rank == 1 || waits) {
    WORKER_CHECK(e.message().find(named) != std::string::npos, "rank %d: %s", rank, e.toString().c_str());
    WORKER_CHECK(rank == 0 || e.code() == ErrorCode::kInvalidArgument, "%s", e.toString().c_str());
    WORKER_CHECK(rank == 0 || waited < 5.0, "rank 1 waited %.1f s", waited);
    WORKER_CHECK(!comm.send(buffer.get(), 1, DataType::kUInt8, 1 - rank, stream).isOk(),
                 "a failed communicator accepted more work");
  } else {
    WORKER_CHECK(e.isOk(), "rank 0: %s", e.toString().c_str());
  }
  std::printf("ok lengths differ: rank %d after %.2f s: %s\n", rank, waited, e.toString().c_str());
}

}  // namespace gpupeer
