// RankCommunicator::registerBuffer and deregisterBuffer: each rank exports the memory its buffer
// lies in (the cudaMalloc allocation as a CUDA IPC handle, as start-up exports the scratch; cuMem
// segments as POSIX file descriptors passed over Unix sockets), every rank maps every peer's,
// and each writes the peers' ranges into its kernels' table (RegisteredBuffer
// [index][rank]). A call inside registered buffers then shows its buffers to the peers as
// (index, offset) on its call line, and the peers' pull kernels find them in their tables
// (collectives/call_line.cuh): no pointer of a peer is needed on the host, per call or in a graph.

#include <fmt/format.h>
#include <unistd.h>

#include "cuda/cuda_status.hpp"
#include "gpupeer/peer_access.hpp"
#include "ranks/fd_exchange.hpp"
#include "ranks/rank_communicator_impl.hpp"

namespace gpupeer {
namespace {

// Row `index` of the table: every rank's range as this process reaches it (null: none).
Status writeTableRow(RankCommunicator::Impl& c, int index, const std::vector<RegisteredBuffer>& row) {
  if (!c.registeredTable.get()) return Status::ok();  // one rank: no kernel reads it
  std::vector<RegisteredBuffer> full(kMaxCommRanks);
  std::copy(row.begin(), row.end(), full.begin());
  char* at = static_cast<char*>(c.registeredTable.get()) + sizeof(RegisteredBuffer) * kMaxCommRanks * index;
  // Synchronous: the row is in place before any call that uses it is made.
  GPUPEER_CUDA_CHECK(c.device,
                     cudaMemcpy(at, full.data(), sizeof(RegisteredBuffer) * kMaxCommRanks, cudaMemcpyHostToDevice));
  return Status::ok();
}

// This rank's buffer as its peers need it: the cudaMalloc allocation it lies in (one CUDA IPC
// handle), or the cuMem segments it spans (a POSIX file descriptor each).
struct Exported {
  std::string why;                             // empty where it may be registered
  const char* allocation = nullptr;            // cudaMalloc: the allocation's start
  std::vector<vmm::ExportedSegment> segments;  // cuMem
};

Exported exportBuffer(const RankCommunicator::Impl& c, const void* ptr, std::size_t bytes) {
  Exported e;
  if (bytes == 0) {
    e.why = "a buffer of 0 bytes";
    return e;
  }
  bool fromCudaMalloc = false;
  Status st = checkBuffer(ptr, bytes, c.device, c.rank, "registered", &fromCudaMalloc, &e.allocation);
  if (!st.isOk()) {
    e.why = st.message();
  } else if (c.registrations.size() >= static_cast<std::size_t>(kMaxRegistrations)) {
    e.why = fmt::format("rank {}: {} registrations in this communicator's life, the most", c.rank, kMaxRegistrations);
  } else if (!fromCudaMalloc || !e.allocation) {
    e.allocation = nullptr;
    Result<std::vector<vmm::ExportedSegment>> segments = vmm::exportSegments(c.device, ptr, bytes);
    if (segments.isOk())
      e.segments = std::move(segments.value());
    else
      e.why = fmt::format("rank {}: {}", c.rank, segments.status().message());
  }
  return e;
}

// Ranks in other processes, which map this rank's memory from handles or descriptors.
int otherProcesses(const RankCommunicator::Impl& c) {
  int k = 0;
  for (int r = 0; r < c.n(); ++r) k += r != c.rank && c.peers[r].pid != getpid();
  return k;
}

// What the peers are told: a CUDA IPC handle, or the segments and where to fetch their
// descriptors. Ranks of this process use the pointers; cuMem memory is opened to their GPUs.
Result<nlohmann::json> describe(RankCommunicator::Impl& c, Exported& e, const void* ptr, std::size_t bytes,
                                FdOffer& offer) {
  nlohmann::json j = {{"bytes", static_cast<std::uint64_t>(bytes)}};
  if (e.allocation) {
    Result<SharedBuffer> s = shareBuffer(c.device, const_cast<char*>(e.allocation), 0);
    if (!s.isOk()) return s.status();
    j["buffer"] = sharedJson(s.value());
    j["offset"] = static_cast<std::uint64_t>(static_cast<const char*>(ptr) - e.allocation);
    return j;
  }
  nlohmann::json segments = nlohmann::json::array();
  for (const vmm::ExportedSegment& s : e.segments) segments.push_back({s.base, s.bytes});
  j["segments"] = segments;
  j["offset"] = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(ptr) - e.segments.front().base);
  for (int r = 0; r < c.n(); ++r)
    if (r != c.rank && c.peers[r].pid == getpid() && c.peers[r].device != c.device)
      for (const vmm::ExportedSegment& s : e.segments)
        GPUPEER_RETURN_IF_ERROR(vmm::grantAccess(s.base, s.bytes, c.peers[r].device));
  if (otherProcesses(c) > 0) {
    Result<FdOffer> opened = FdOffer::open();
    if (!opened.isOk()) return opened.status();
    offer = std::move(opened.value());
    j["fdSocket"] = offer.name();
    j["fdToken"] = offer.token();
  }
  return j;
}

// The cuMem segments of every peer in another process, mapped here: connect to each offer,
// serve this rank's own, then read and map (the order fd_exchange.hpp explains).
Status mapPeerSegments(RankCommunicator::Impl& c, const std::vector<nlohmann::json>& all, const Exported& mine,
                       FdOffer& offer, std::vector<std::shared_ptr<MappedPeerBuffer>>& mapped) {
  const SocketDeadline deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(c.core.timeoutNs);
  std::vector<UniqueFd> connections(c.n());
  Status st;
  for (int r = 0; r < c.n() && st.isOk(); ++r) {
    if (r == c.rank || c.peers[r].pid == getpid() || !all[r].contains("segments")) continue;
    Result<UniqueFd> sock =
        connectToOffer(all[r].value("fdSocket", std::string()), all[r].value("fdToken", std::string()), deadline);
    if (sock.isOk())
      connections[r] = std::move(sock.value());
    else
      st = sock.status();
  }
  if (!mine.segments.empty() && otherProcesses(c) > 0) {
    std::vector<int> fds;
    for (const vmm::ExportedSegment& s : mine.segments) fds.push_back(s.fd.get());
    Status served = offer.serve(otherProcesses(c), fds, deadline);
    if (st.isOk()) st = served;
  }
  for (int r = 0; r < c.n() && st.isOk(); ++r) {
    if (connections[r].get() < 0) continue;
    std::vector<std::size_t> bytes;
    for (const nlohmann::json& s : all[r]["segments"])
      if (s.is_array() && s.size() == 2 && s[1].is_number_unsigned()) bytes.push_back(s[1].get<std::size_t>());
    if (bytes.empty() || bytes.size() != all[r]["segments"].size() || bytes.size() > vmm::kMaxSegments)
      return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("registerBuffer: rank {}'s segments are malformed", r));
    Result<std::vector<UniqueFd>> fds = receiveOffered(connections[r].get(), bytes.size(), deadline);
    if (!fds.isOk()) return fds.status();
    auto peer = std::make_shared<MappedPeerBuffer>();
    GPUPEER_RETURN_IF_ERROR(peer->mapSegments(c.device, fds.value(), bytes));
    mapped[r] = peer;
  }
  return st;
}

// A peer's CUDA IPC allocation mapped here, once while any registration in it lives (CUDA IPC
// opens a handle once per process).
Result<std::shared_ptr<MappedPeerBuffer>> mapPeerAllocation(RankCommunicator::Impl& c, int r, const nlohmann::json& j) {
  SharedBuffer b;
  if (!sharedFromJson(j["buffer"], b))
    return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("registerBuffer: rank {}'s handle is malformed", r));
  if (c.peers[r].pid == getpid() && c.peers[r].device != c.device)
    GPUPEER_RETURN_IF_ERROR(PeerAccess::process().enable(c.device, c.peers[r].device));
  std::shared_ptr<MappedPeerBuffer> peer = c.peerAllocations[{r, b.pointer}].lock();
  if (!peer) {
    peer = std::make_shared<MappedPeerBuffer>();
    GPUPEER_RETURN_IF_ERROR(peer->map(c.device, b, c.peers[r].pid));
    c.peerAllocations[{r, b.pointer}] = peer;
  }
  return peer;
}

}  // namespace

Status registerRankBuffer(RankCommunicator::Impl& c, void* ptr, std::size_t bytes) {
  const int n = c.n();
  Exported mine = exportBuffer(c, ptr, bytes);
  FdOffer offer;
  nlohmann::json me = {{"ok", mine.why.empty()}, {"why", mine.why}, {"index", c.registrations.size()}};
  if (mine.why.empty() && n > 1) {
    Result<nlohmann::json> described = describe(c, mine, ptr, bytes, offer);
    if (!described.isOk()) {
      me = {{"ok", false}, {"why", described.status().message()}, {"index", c.registrations.size()}};
    } else {
      me.update(described.value());
    }
  }
  // Every rank takes part in the exchange even with a refusal, so that none waits for it.
  Result<std::vector<nlohmann::json>> all = exchangeJson(c.exchange, me, n, "register buffer");
  if (!all.isOk()) return all.status();
  for (int r = 0; r < n; ++r) {
    const nlohmann::json& j = all.value()[r];
    if (!j.value("ok", false))
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("registerBuffer: rank {} refused its buffer: {}", r, j.value("why", "")));
    if (j.value("index", std::size_t{0}) != c.registrations.size())
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("registerBuffer: rank {} registers its buffer number {}, rank {} number {}: "
                                       "every rank registers and deregisters in the same order",
                                       r, j.value("index", std::size_t{0}), c.rank, c.registrations.size()));
  }
  Registration reg;
  reg.base = static_cast<const char*>(ptr);
  reg.bytes = bytes;
  reg.mechanism = n == 1 ? "none" : otherProcesses(c) == 0 ? "same-process" : mine.allocation ? "cuda-ipc" : "cumem-fd";
  std::vector<RegisteredBuffer> row(n);
  std::vector<std::shared_ptr<MappedPeerBuffer>> peers(n);
  Status mapped = n > 1 ? mapPeerSegments(c, all.value(), mine, offer, peers) : Status::ok();
  for (int r = 0; r < n && mapped.isOk(); ++r) {
    const nlohmann::json& j = all.value()[r];
    const std::uint64_t offset = j.value("offset", std::uint64_t{0}), length = j.value("bytes", std::uint64_t{0});
    if (r == c.rank) {
      row[r] = {static_cast<char*>(ptr), bytes};
      continue;
    }
    char* at = nullptr;
    if (j.contains("buffer")) {
      Result<std::shared_ptr<MappedPeerBuffer>> peer = mapPeerAllocation(c, r, j);
      if (!peer.isOk()) {
        mapped = peer.status();
        break;
      }
      reg.mapped.push_back(peer.value());
      at = static_cast<char*>(peer.value()->get());
    } else if (peers[r]) {  // cuMem of another process
      reg.mapped.push_back(peers[r]);
      at = static_cast<char*>(peers[r]->get());
    } else if (j.contains("segments") && !j["segments"].empty() && j["segments"][0].is_array() &&
               !j["segments"][0].empty() && j["segments"][0][0].is_number_unsigned()) {  // this process
      at = reinterpret_cast<char*>(j["segments"][0][0].get<std::uint64_t>());
    }
    if (!at) {
      mapped = GPUPEER_ERROR(ErrorCode::kParse, fmt::format("registerBuffer: rank {}'s buffer is malformed", r));
      break;
    }
    row[r] = {at + offset, length};
  }
  // Every rank agrees that every rank mapped every peer's, or none registers.
  Result<std::vector<nlohmann::json>> verdicts =
      exchangeJson(c.exchange, {{"ok", mapped.isOk()}, {"why", mapped.message()}}, n, "register buffer: mapping");
  if (!verdicts.isOk()) return verdicts.status();
  if (!mapped.isOk()) return mapped;
  for (int r = 0; r < n; ++r)
    if (!verdicts.value()[r].value("ok", false))
      return GPUPEER_ERROR(ErrorCode::kUnsupported, fmt::format("registerBuffer: rank {} could not map its peers' "
                                                                "buffers: {}",
                                                                r, verdicts.value()[r].value("why", std::string())));
  GPUPEER_RETURN_IF_ERROR(writeTableRow(c, static_cast<int>(c.registrations.size()), row));
  reg.live = true;
  c.registrations.push_back(std::move(reg));
  return Status::ok();
}

Status deregisterRankBuffer(RankCommunicator::Impl& c, void* ptr) {
  int index = -1;
  for (std::size_t k = 0; k < c.registrations.size(); ++k)
    if (c.registrations[k].live && c.registrations[k].base == ptr) index = static_cast<int>(k);
  Result<std::vector<nlohmann::json>> all = exchangeJson(c.exchange, {{"index", index}}, c.n(), "deregister buffer");
  if (!all.isOk()) return all.status();
  for (int r = 0; r < c.n(); ++r)
    if (all.value()[r].value("index", -1) != index || index < 0)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("deregisterBuffer: rank {} deregisters its registration {}, rank {} {} ({}): "
                                       "every rank deregisters a registered buffer, in the same order",
                                       r, all.value()[r].value("index", -1), c.rank, index, ptr));
  GPUPEER_RETURN_IF_ERROR(writeTableRow(c, index, {}));
  Registration& reg = c.registrations[index];
  reg.live = false;
  // Unmapped unless another registration uses them: no operation does (the caller's contract).
  reg.mapped.clear();
  for (auto it = c.peerAllocations.begin(); it != c.peerAllocations.end();)
    it = it->second.expired() ? c.peerAllocations.erase(it) : std::next(it);
  return Status::ok();
}

bool findRegistered(const RankCommunicator::Impl& c, const void* p, std::size_t bytes, std::uint32_t ref[2]) {
  const char* at = static_cast<const char*>(p);
  for (std::size_t k = 0; k < c.registrations.size(); ++k) {
    const Registration& r = c.registrations[k];
    if (!r.live || at < r.base || at + bytes > r.base + r.bytes) continue;
    const std::uint64_t offset = static_cast<std::uint64_t>(at - r.base);
    ref[0] = static_cast<std::uint32_t>(k + 1) | static_cast<std::uint32_t>(offset >> 32) << 12;
    ref[1] = static_cast<std::uint32_t>(offset);
    return true;
  }
  return false;
}

}  // namespace gpupeer
