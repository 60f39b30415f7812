// `nvidia-smi topo -p2p r|w|n|a|p`: which GPU pairs the driver allows P2P, and why not.
#include <fmt/format.h>

#include <map>

#include "tool_output/fields.hpp"
#include "tool_output/gpu_matrix.hpp"
#include "tool_output/parsers.hpp"

namespace gpupeer::tool_output {
namespace {

// nvmlGpuP2PStatus_t as nvidia-smi abbreviates it, with what each means in practice.
struct P2pCode {
  const char* code;
  const char* meaning;
  const char* kbId;
};
constexpr P2pCode kCodes[] = {
    {"OK", "P2P supported", ""},
    {"CNS", "chipset not supported: the CPU or PCIe root complex does not route peer traffic between these GPUs",
     "cuda/peer-partial-matrix"},
    {"GNS", "GPU not supported: this GPU model or driver refuses P2P (most GeForce cards without NVLink)",
     "cuda/peer-access-unsupported-by-hardware"},
    {"TNS", "topology not supported: the path between the GPUs (e.g. across CPU sockets) does not allow P2P",
     "cuda/peer-partial-matrix"},
    {"NS", "not supported", "cuda/peer-access-unsupported-by-hardware"},
    {"DR", "disabled by a driver registry key (RmP2P... settings or the hypervisor)",
     "cuda/peer-access-unsupported-by-hardware"},
    {"U", "unknown: the driver could not tell (often a VM without P2P support)",
     "cuda/peer-access-unsupported-by-hardware"},
};

const P2pCode* findCode(const std::string& cell) {
  for (const P2pCode& c : kCodes)
    if (cell == c.code) return &c;
  return nullptr;
}

class TopoP2pParser : public GpuMatrixParser {
 public:
  std::string_view tool() const override { return "nvidia-smi topo -p2p"; }

 protected:
  bool interpret(const GpuMatrix& m, ToolOutputFinding& f) const override {
    if (!m.gpuCellsAre([](const std::string& c) { return findCode(c) != nullptr; })) return false;
    std::vector<int> gpus = m.gpus();
    std::map<std::string, std::vector<std::string>> refused;  // code -> "GPU0->GPU1"
    std::size_t pairs = 0, ok = 0;
    for (int a : gpus)
      for (int b : gpus) {
        if (a == b) continue;
        std::string c = m.cell(a, b);
        if (c.empty()) continue;
        ++pairs;
        if (c == "OK")
          ++ok;
        else
          refused[c].push_back(fmt::format("GPU{}->GPU{}", a, b));
      }
    if (refused.empty()) {
      f.title = fmt::format("{} GPUs: the driver allows P2P on all {} ordered pairs", gpus.size(), pairs);
    } else {
      f.severity = Severity::kWarning;
      f.title = fmt::format("{} GPUs: {} of {} ordered pairs lack P2P", gpus.size(), pairs - ok, pairs);
      for (const auto& [code, list] : refused) {
        const P2pCode* pc = findCode(code);
        f.details.push_back(fmt::format("{} ({}): {}", code, pc->meaning, joinLimited(list, 8)));
        addKbId(f, pc->kbId);
      }
      f.details.push_back(
          "those pairs copy through host memory (cudaMemcpyPeer) and NCCL uses SHM; "
          "frameworks that require P2P refuse to start");
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<ToolOutputParser> makeTopoP2pParser() { return std::make_unique<TopoP2pParser>(); }

}  // namespace gpupeer::tool_output
