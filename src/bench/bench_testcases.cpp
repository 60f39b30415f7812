// The testcases: each a key, a description and a run function that waives itself where the
// machine cannot run it (one GPU, no P2P between a pair).
#include <fmt/format.h>

#include <optional>

#include "bench/bench_device.hpp"
#include "core/nvtx_range.hpp"
#include "gpupeer/topology.hpp"

namespace gpupeer {
namespace {

using bench::Driver;
using bench::Engine;
using bench::Transfer;
using bench::TransferSetup;

BenchResult begin(const char* key, BenchKind kind = BenchKind::kBandwidth) {
  BenchResult r;
  r.key = key;
  r.kind = kind;
  if (const BenchTestcase* t = findBenchTestcase(key)) r.description = t->description;
  return r;
}

BenchCell noteCell(int a, int b, std::string label, std::string note) {
  BenchCell c;
  c.row = a;
  c.col = b;
  c.label = std::move(label);
  c.note = std::move(note);
  return c;
}

bool peerCapable(const Snapshot& s, int a, int b) {
  return p2pStatus(s, a, b).state == P2pStatus::State::kOk && p2pStatus(s, b, a).state == P2pStatus::State::kOk;
}

// Adds the cells of one measurement, or a note on the pair when it failed or was waived.
void addCells(BenchResult& r, Result<std::vector<BenchCell>> cells, int a, int b) {
  if (cells.isOk()) {
    for (BenchCell& c : cells.value()) r.cells.push_back(std::move(c));
    return;
  }
  r.cells.push_back(noteCell(a, b, fmt::format("GPU{}->GPU{}", a, b), "FAIL: " + cells.status().toString()));
}

// Every ordered pair that can do P2P, one transfer (or both directions) at a time.
BenchResult pairwise(const Snapshot& s, const BenchOptions& o, const char* key, TransferSetup setup, bool bidir,
                     bool needP2p = true) {
  BenchResult r = begin(key);
  auto devices = bench::selectedDevices(s, o);
  if (devices.size() < 2) {
    r.waived = fmt::format("needs two GPUs; {} selected", devices.size());
    return r;
  }
  for (int a : devices) {
    for (int b : devices) {
      if (a == b || (bidir && a > b)) continue;
      if (needP2p && !peerCapable(s, a, b)) {
        r.cells.push_back(noteCell(a, b, fmt::format("GPU{}->GPU{}", a, b), "waived: no P2P between this pair"));
        continue;
      }
      std::vector<Transfer> t = {{a, b}};
      if (bidir) t.push_back({b, a});
      NvtxRange range("bench {} GPU{}{}GPU{} {}", key, a, bidir ? "<->" : "->", b, formatBytes(o.bytes));
      addCells(r, bench::measureTransfers(s, o, setup, t, o.bytes), a, b);
    }
  }
  return r;
}

// How each pairwise testcase (and the sweep of the same key) moves data.
std::optional<TransferSetup> transferSetupFor(const std::string& key, Path path) {
  if (key == "ce_read") return TransferSetup{Engine::kCopyEngine, Driver::kDestination};
  if (key == "ce_write" || key == "ce_bidir") return TransferSetup{Engine::kCopyEngine, Driver::kSource};
  if (key == "sm_read") return TransferSetup{Engine::kSm, Driver::kDestination};
  if (key == "sm_write" || key == "sm_bidir") return TransferSetup{Engine::kSm, Driver::kSource};
  if (key == "sm_copy") return TransferSetup{Engine::kSmPushPull, Driver::kSource};
  if (key == "ce_no_p2p") return TransferSetup{Engine::kCopyEngine, Driver::kSource, false};
  if (key == "staged" || key == "staged_bidir")
    return TransferSetup{Engine::kTransfer, Driver::kDestination, true, Path::kStaged};
  if (key == "copy") return TransferSetup{Engine::kTransfer, Driver::kDestination, true, path};
  return std::nullopt;
}

// Pairwise testcases: the setup from the table; `bidir` runs both directions at once;
// `needP2p` waives pairs without P2P (the fallback testcases run on every pair).
template <bool bidir, bool needP2p = true>
BenchResult pairwiseCase(const Snapshot& s, const BenchOptions& o, const char* key) {
  return pairwise(s, o, key, *transferSetupFor(key, o.path), bidir, needP2p);
}
BenchResult ceRead(const Snapshot& s, const BenchOptions& o) { return pairwiseCase<false>(s, o, "ce_read"); }
BenchResult ceWrite(const Snapshot& s, const BenchOptions& o) { return pairwiseCase<false>(s, o, "ce_write"); }
BenchResult ceBidir(const Snapshot& s, const BenchOptions& o) { return pairwiseCase<true>(s, o, "ce_bidir"); }
BenchResult smRead(const Snapshot& s, const BenchOptions& o) { return pairwiseCase<false>(s, o, "sm_read"); }
BenchResult smWrite(const Snapshot& s, const BenchOptions& o) { return pairwiseCase<false>(s, o, "sm_write"); }
BenchResult smBidir(const Snapshot& s, const BenchOptions& o) { return pairwiseCase<true>(s, o, "sm_bidir"); }
BenchResult smCopy(const Snapshot& s, const BenchOptions& o) { return pairwiseCase<false>(s, o, "sm_copy"); }
BenchResult staged(const Snapshot& s, const BenchOptions& o) { return pairwiseCase<false, false>(s, o, "staged"); }
BenchResult stagedBidir(const Snapshot& s, const BenchOptions& o) {
  return pairwiseCase<true, false>(s, o, "staged_bidir");
}
BenchResult ceNoP2p(const Snapshot& s, const BenchOptions& o) { return pairwiseCase<false, false>(s, o, "ce_no_p2p"); }
BenchResult engineCopy(const Snapshot& s, const BenchOptions& o) {
  BenchResult r = pairwiseCase<false, false>(s, o, "copy");
  r.description += fmt::format(" (--path {})", pathName(o.path));
  return r;
}

BenchResult batch4k(const Snapshot& s, const BenchOptions& o) {
  BenchResult r = begin("batch_4k", BenchKind::kLatency);
  auto devices = bench::selectedDevices(s, o);
  if (devices.size() < 2) {
    r.waived = fmt::format("needs two GPUs; {} selected", devices.size());
    return r;
  }
  for (int a : devices)
    for (int b : devices) {
      if (a == b) continue;
      if (!peerCapable(s, a, b)) {
        r.cells.push_back(noteCell(a, b, fmt::format("GPU{}->GPU{}", a, b),
                                   "waived: no P2P between this pair (the batch would be staged copy by copy)"));
        continue;
      }
      addCells(r, bench::measureBatch(s, o, a, b, 1000, 4096), a, b);
    }
  return r;
}

BenchResult fanned(const Snapshot& s, const BenchOptions& o, const char* key, bool outward) {
  BenchResult r = begin(key);
  auto devices = bench::selectedDevices(s, o);
  if (devices.size() < 2) {
    r.waived = fmt::format("needs two GPUs; {} selected", devices.size());
    return r;
  }
  for (int hub : devices) {
    std::vector<Transfer> t;
    for (int other : devices)
      if (other != hub && peerCapable(s, hub, other))
        t.push_back(outward ? Transfer{hub, other} : Transfer{other, hub});
    if (t.empty()) continue;
    std::vector<double> together;
    auto cells = bench::measureTransfers(s, o, {Engine::kCopyEngine, Driver::kSource}, t, o.bytes, &together);
    BenchCell total;
    total.row = outward ? hub : -1;
    total.col = outward ? -1 : hub;
    total.label = outward ? fmt::format("GPU{}->all", hub) : fmt::format("all->GPU{}", hub);
    if (!cells.isOk()) {
      total.note = "FAIL: " + cells.status().toString();
    } else {
      // All the bytes over the time until the last copy ended. The sum of each copy's own
      // rate read 726 GB/s out of one H200 whose 18 links carry 478 (4x H200, 2026-11-22):
      // the copy engines ran the copies partly one after another.
      total.value = summarize(together);
      total.verified = true;
      for (const BenchCell& c : cells.value()) {
        total.verified = total.verified && c.verified;
        if (!c.note.empty()) total.note += c.note + " ";
      }
    }
    r.cells.push_back(total);
  }
  return r;
}

BenchResult oneToAll(const Snapshot& s, const BenchOptions& o) { return fanned(s, o, "ce_one_to_all", true); }
BenchResult allToOne(const Snapshot& s, const BenchOptions& o) { return fanned(s, o, "ce_all_to_one", false); }

BenchResult hostCopy(const Snapshot& s, const BenchOptions& o, const char* key, bool toDevice) {
  BenchResult r = begin(key);
  for (int d : bench::selectedDevices(s, o)) {
    Transfer t = toDevice ? Transfer{-1, d} : Transfer{d, -1};
    addCells(r, bench::measureTransfers(s, o, {Engine::kCopyEngine, Driver::kSource}, {t}, o.bytes), t.src, t.dst);
  }
  if (r.cells.empty()) r.waived = "no GPU selected";
  return r;
}
BenchResult h2d(const Snapshot& s, const BenchOptions& o) { return hostCopy(s, o, "h2d", true); }
BenchResult d2h(const Snapshot& s, const BenchOptions& o) { return hostCopy(s, o, "d2h", false); }

BenchResult latency(const Snapshot& s, const BenchOptions& o, const char* key) {
  BenchResult r = begin(key, BenchKind::kLatency);
  auto devices = bench::selectedDevices(s, o);
  if (devices.size() < 2) {
    r.waived = fmt::format("needs two GPUs; {} selected", devices.size());
    return r;
  }
  const std::string k = key;
  for (int a : devices) {
    for (int b : devices) {
      if (a == b || (k == "latency_pingpong" && a > b)) continue;
      BenchCell c;
      c.row = a;
      c.col = b;
      c.label = k == "latency_pingpong" ? fmt::format("GPU{}<->GPU{}", a, b) : fmt::format("GPU{}->GPU{}", a, b);
      if (!peerCapable(s, a, b)) {
        c.note = "waived: no P2P between this pair";
        r.cells.push_back(c);
        continue;
      }
      NvtxRange range("bench {} {}", key, c.label);
      // Pointer chase: GPU b (row's peer) loads from GPU a's memory; the row names the memory owner.
      Result<Stats> v = k == "latency_chase"      ? bench::measurePointerChase(o, b, a)
                        : k == "latency_pingpong" ? bench::measurePingPong(o, a, b)
                                                  : bench::measureSmallCopy(o, a, b);
      if (v.isOk())
        c.value = v.value();
      else
        c.note = "FAIL: " + v.status().toString();
      r.cells.push_back(c);
    }
  }
  return r;
}
BenchResult latencyChase(const Snapshot& s, const BenchOptions& o) { return latency(s, o, "latency_chase"); }
BenchResult latencyPingPong(const Snapshot& s, const BenchOptions& o) { return latency(s, o, "latency_pingpong"); }
BenchResult latencyCe(const Snapshot& s, const BenchOptions& o) { return latency(s, o, "latency_ce"); }

}  // namespace

const std::vector<BenchTestcase>& benchTestcases() {
  static const std::vector<BenchTestcase> kCases = {
      {"ce_read", "copy engine, destination GPU pulls from its peer (read), one direction at a time",
       BenchKind::kBandwidth, ceRead},
      {"ce_write", "copy engine, source GPU pushes into its peer (write), one direction at a time",
       BenchKind::kBandwidth, ceWrite},
      {"ce_bidir", "copy engine, both directions of a pair at once (each direction and the total)",
       BenchKind::kBandwidth, ceBidir},
      {"sm_read", "SM kernel on the destination GPU loads peer memory (read), one direction", BenchKind::kBandwidth,
       smRead},
      {"sm_write", "SM kernel on the source GPU stores into peer memory (write), one direction", BenchKind::kBandwidth,
       smWrite},
      {"sm_bidir", "SM kernels writing both directions of a pair at once", BenchKind::kBandwidth, smBidir},
      {"sm_copy", "SM kernels on both GPUs move one direction: the source pushes half, the destination pulls half",
       BenchKind::kBandwidth, smCopy},
      {"ce_one_to_all",
       "copy engine, one GPU writes to every other GPU at once (all bytes over the time to the last copy)",
       BenchKind::kBandwidth, oneToAll},
      {"ce_all_to_one",
       "copy engine, every other GPU writes into one GPU at once (all bytes over the time to the last copy)",
       BenchKind::kBandwidth, allToOne},
      {"h2d", "copy engine, pinned host memory to each GPU", BenchKind::kBandwidth, h2d},
      {"d2h", "copy engine, each GPU to pinned host memory", BenchKind::kBandwidth, d2h},
      {"copy", "gpupeer's copy API on the path --path chooses (auto, ce, kernel, staged), destination's stream",
       BenchKind::kBandwidth, engineCopy},
      {"staged", "gpupeer's host-staged pipeline (chunked, both PCIe links at once), one direction",
       BenchKind::kBandwidth, staged},
      {"staged_bidir", "gpupeer's host-staged pipeline, both directions of a pair at once", BenchKind::kBandwidth,
       stagedBidir},
      {"batch_4k",
       "1000 scattered 4 KiB copies: a loop of cudaMemcpyPeerAsync against one copyBatch call (us per 1000)",
       BenchKind::kLatency, batch4k},
      {"ce_no_p2p", "copy engine between GPUs with peer access disabled: what CUDA's host-staged fallback costs",
       BenchKind::kBandwidth, ceNoP2p},
      {"latency_chase", "load latency: dependent pointer chase by the column GPU through the row GPU's memory (us)",
       BenchKind::kLatency, latencyChase},
      {"latency_ce", "time of one 4-byte copy-engine copy, issued back to back (us)", BenchKind::kLatency, latencyCe},
      {"latency_pingpong", "one-way time of a flag ping-pong between two GPUs (us)", BenchKind::kLatency,
       latencyPingPong},
  };
  return kCases;
}

const BenchTestcase* findBenchTestcase(const std::string& key) {
  for (const BenchTestcase& t : benchTestcases())
    if (t.key == key) return &t;
  return nullptr;
}

Status checkSweepTestcase(const std::string& key) {
  // The path only chooses how "copy" moves data, not whether a key is known.
  if (!transferSetupFor(key, Path::kAuto) || key.find("bidir") != std::string::npos)
    return GPUPEER_ERROR(
        ErrorCode::kInvalidArgument,
        fmt::format(
            "the sweep takes ce_read, ce_write, sm_read, sm_write, sm_copy, copy, staged or ce_no_p2p, not '{}'", key));
  return Status::ok();
}

BenchResult runSweep(const Snapshot& s, const BenchOptions& o, const std::string& key, int src, int dst,
                     const std::vector<std::size_t>& sizes) {
  BenchResult r;
  r.key = key + "_sweep";
  r.description = fmt::format("{} from GPU{} to GPU{} against size", key, src, dst);
  if (Status known = checkSweepTestcase(key); !known.isOk()) {
    r.error = known.message();
    return r;
  }
  TransferSetup setup = *transferSetupFor(key, o.path);
  if (setup.engine == Engine::kTransfer) {
    auto possible = choosePath(s, src, dst, setup.path);
    if (!possible.isOk()) {
      r.waived = possible.status().message();
      return r;
    }
    r.key = fmt::format("{}_{}_sweep", key, pathName(possible.value().path));
    r.description = fmt::format("{} ({}) from GPU{} to GPU{} against size", key, possible.value().reason, src, dst);
  } else if (setup.peerAccess && !peerCapable(s, src, dst)) {
    r.waived = fmt::format("no P2P between GPU{} and GPU{}", src, dst);
    return r;
  }
  for (std::size_t bytes : sizes) {
    BenchOptions sized = o;
    // Small transfers need more copies per batch to rise above event resolution.
    sized.copiesPerSample = bytes < (1u << 20) ? 64 : bytes < (64u << 20) ? 16 : o.copiesPerSample;
    NvtxRange range("bench {} sweep GPU{}->GPU{} {}", r.key, src, dst, formatBytes(bytes));
    auto cells = bench::measureTransfers(s, sized, setup, {{src, dst}}, bytes);
    BenchCell c = cells.isOk() ? cells.value()[0] : noteCell(src, dst, "", "FAIL: " + cells.status().toString());
    c.label = formatBytes(bytes);
    r.cells.push_back(c);
  }
  return r;
}

}  // namespace gpupeer
