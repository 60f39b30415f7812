// `nvidia-smi topo -m`: how each GPU pair is connected, and what that means for P2P and NCCL.
#include <fmt/format.h>

#include <map>

#include "tool_output/fields.hpp"
#include "tool_output/gpu_matrix.hpp"
#include "tool_output/parsers.hpp"

namespace gpupeer::tool_output {
namespace {

// What each connection class means for peer traffic. NCCL uses P2P up to PXB by default
// (src/graph/paths.cc: p2pLevel = PATH_PXB; SYS for two GPUs on AMD CPUs); NCCL_P2P_LEVEL
// moves the limit.
struct LinkClass {
  const char* code;
  const char* meaning;
  bool ncclP2pByDefault;
};
constexpr LinkClass kClasses[] = {
    {"PIX", "at most one PCIe bridge (one switch): P2P if the GPUs allow it", true},
    {"PXB", "several PCIe bridges, not the CPU's host bridge: P2P if the GPUs allow it", true},
    {"PHB", "through the CPU's PCIe host bridge: NCCL skips P2P by default (NCCL_P2P_LEVEL=PHB)", false},
    {"NODE", "across host bridges of one NUMA node: NCCL skips P2P by default", false},
    {"SYS", "across the CPU sockets' interconnect (QPI/UPI/xGMI): NCCL skips P2P by default; CUDA often refuses it",
     false},
    {"SOC", "across the CPU sockets (older name of SYS): NCCL skips P2P by default", false},
};

const LinkClass* findClass(const std::string& cell) {
  for (const LinkClass& c : kClasses)
    if (cell == c.code) return &c;
  return nullptr;
}

int nvlinkCount(const std::string& cell) {
  if (!startsWith(cell, "NV")) return 0;
  return static_cast<int>(parseCount(std::string_view(cell).substr(2)).value_or(0));
}

class TopoLinksParser : public GpuMatrixParser {
 public:
  std::string_view tool() const override { return "nvidia-smi topo -m"; }

 protected:
  bool interpret(const GpuMatrix& m, ToolOutputFinding& f) const override {
    if (!m.gpuCellsAre([](const std::string& c) { return nvlinkCount(c) > 0 || findClass(c) != nullptr; }))
      return false;
    std::vector<int> gpus = m.gpus();
    std::map<std::string, std::vector<std::string>> byCell;  // cell -> "GPU0-GPU1"
    int bestNv = 0;
    for (std::size_t i = 0; i < gpus.size(); ++i)
      for (std::size_t j = i + 1; j < gpus.size(); ++j) {
        std::string c = m.cell(gpus[i], gpus[j]);
        byCell[c].push_back(fmt::format("GPU{}-GPU{}", gpus[i], gpus[j]));
        bestNv = std::max(bestNv, nvlinkCount(c));
      }
    std::size_t pairs = gpus.size() * (gpus.size() - 1) / 2, noP2p = 0, nvPairs = 0;
    for (const auto& [cell, list] : byCell) {
      int nv = nvlinkCount(cell);
      std::string meaning;
      if (nv > 0) {
        nvPairs += list.size();
        meaning = fmt::format("{} bonded NVLink(s)", nv);
        if (nv < bestNv) {
          meaning +=
              fmt::format(", fewer than the NV{} of other pairs: a link may be down (nvidia-smi nvlink -s)", bestNv);
          f.severity = Severity::kWarning;
          addKbId(f, "nvlink/link-inactive");
        }
      } else if (const LinkClass* lc = findClass(cell)) {
        meaning = lc->meaning;
        if (!lc->ncclP2pByDefault) noP2p += list.size();
      } else {
        meaning = "not read";
      }
      f.details.push_back(fmt::format("{} ({} pair{}): {}; {}", cell, list.size(), list.size() == 1 ? "" : "s", meaning,
                                      joinLimited(list, 6)));
    }
    if (bestNv > 0 && byCell.size() == 1)
      f.title = fmt::format("{} GPUs, every pair on NVLink (NV{})", gpus.size(), bestNv);
    else
      f.title = fmt::format("{} GPUs: {} of {} pair(s) on NVLink, {} through the CPU (no NCCL P2P by default)",
                            gpus.size(), nvPairs, pairs, noP2p);
    if (noP2p > 0) {
      f.kbIds.push_back("nccl/p2p-level-semantics");
      f.details.push_back(
          "NCCL uses SHM for those pairs unless NCCL_P2P_LEVEL allows the path; "
          "`nvidia-smi topo -p2p r` says whether the GPUs allow P2P at all");
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<ToolOutputParser> makeTopoLinksParser() { return std::make_unique<TopoLinksParser>(); }

}  // namespace gpupeer::tool_output
