// RankCommunicator::registerBuffer and deregisterBuffer: each rank exports the allocation its
// buffer lies in (a CUDA IPC handle, as start-up exports the scratch), every rank maps every
// peer's, and each writes the peers' ranges into its kernels' table (RegisteredBuffer
// [index][rank]). A call inside registered buffers then shows its buffers to the peers as
// (index, offset) on its call line, and the peers' pull kernels find them in their tables
// (collectives/call_line.cuh): no pointer of a peer is needed on the host, per call or in a graph.

#include <fmt/format.h>
#include <unistd.h>

#include "cuda/cuda_status.hpp"
#include "gpupeer/peer_access.hpp"
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

// This rank's buffer, checked: memory of its GPU, exportable, and a free index. Empty where it
// may be registered.
std::string refusal(const RankCommunicator::Impl& c, const void* ptr, std::size_t bytes, const char** allocation) {
  if (bytes == 0) return "a buffer of 0 bytes";
  bool exportable = false;
  Status st = checkBuffer(ptr, bytes, c.device, c.rank, "registered", &exportable, allocation);
  if (!st.isOk()) return st.message();
  if (!exportable || !*allocation)
    return fmt::format(
        "rank {}: buffer {} is not from cudaMalloc (a pool or virtual-memory allocation), which CUDA IPC "
        "cannot export",
        c.rank, ptr);
  if (c.registrations.size() >= static_cast<std::size_t>(kMaxRegistrations))
    return fmt::format("rank {}: {} registrations in this communicator's life, the most", c.rank, kMaxRegistrations);
  return {};
}

}  // namespace

Status registerRankBuffer(RankCommunicator::Impl& c, void* ptr, std::size_t bytes) {
  const int n = c.n();
  const char* allocation = nullptr;
  const std::string why = refusal(c, ptr, bytes, &allocation);
  nlohmann::json mine = {{"ok", why.empty()}, {"why", why}, {"index", c.registrations.size()}};
  if (why.empty() && n > 1) {
    Result<SharedBuffer> s = shareBuffer(c.device, const_cast<char*>(allocation), 0);
    if (!s.isOk()) return s.status();
    mine["buffer"] = sharedJson(s.value());
    mine["offset"] = static_cast<std::uint64_t>(static_cast<const char*>(ptr) - allocation);
    mine["bytes"] = static_cast<std::uint64_t>(bytes);
  }
  // Every rank takes part in the exchange even with a refusal, so that none waits for it.
  Result<std::vector<nlohmann::json>> all = exchangeJson(c.exchange, mine, n, "register buffer");
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
  std::vector<RegisteredBuffer> row(n);
  Status mapped;
  for (int r = 0; r < n && mapped.isOk(); ++r) {
    if (r == c.rank) {
      row[r] = {static_cast<char*>(ptr), bytes};
      continue;
    }
    const nlohmann::json& j = all.value()[r];
    SharedBuffer b;
    if (!j.contains("buffer") || !sharedFromJson(j["buffer"], b)) {
      mapped = GPUPEER_ERROR(ErrorCode::kParse, fmt::format("registerBuffer: rank {}'s handle is malformed", r));
      break;
    }
    if (c.peers[r].pid == getpid() && c.peers[r].device != c.device)
      mapped = PeerAccess::process().enable(c.device, c.peers[r].device);
    if (!mapped.isOk()) break;
    // A peer's allocation is mapped once while any registration in it lives (CUDA IPC opens a
    // handle once per process).
    std::shared_ptr<MappedPeerBuffer> peer = c.peerAllocations[{r, b.pointer}].lock();
    if (!peer) {
      peer = std::make_shared<MappedPeerBuffer>();
      mapped = peer->map(c.device, b, c.peers[r].pid);
      if (!mapped.isOk()) break;
      c.peerAllocations[{r, b.pointer}] = peer;
    }
    reg.mapped.push_back(peer);
    row[r] = {static_cast<char*>(peer->get()) + j.value("offset", std::uint64_t{0}),
              j.value("bytes", std::uint64_t{0})};
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
