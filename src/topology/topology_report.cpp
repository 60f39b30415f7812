// The `gpupeer topo` report: matrix, affinity, legend and P2P status, as text or JSON.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/bounded_input.hpp"
#include "gpupeer/topology.hpp"

namespace gpupeer {

std::string topoCell(const Snapshot& s, int a, int b) {
  if (a == b) return "X";
  if (int links = nvlinkCountBetween(s, a, b); links > 0) return fmt::format("NV{}", links);
  const PeerPair* p = s.findPair(a, b);
  if (p && p->pciPath.known()) return p->pciPath.value();
  return "?";
}

namespace {

std::string unknownAsNA(const Known<std::string>& k) { return k.known() ? k.value() : "N/A"; }
std::string unknownAsNA(const Known<int>& k) { return k.known() ? std::to_string(k.value()) : "N/A"; }

}  // namespace

std::string renderTopology(const Snapshot& s) {
  std::string out;
  if (s.gpus.empty()) return "No GPU in this snapshot.\n";
  out += fmt::format("{:<8}", "");
  for (const Gpu& g : s.gpus) out += fmt::format("{:<8}", fmt::format("GPU{}", g.index));
  out += fmt::format("{:<16}{:<8}\n", "CPU Affinity", "NUMA Affinity");
  for (const Gpu& a : s.gpus) {
    out += fmt::format("{:<8}", fmt::format("GPU{}", a.index));
    for (const Gpu& b : s.gpus) out += fmt::format("{:<8}", topoCell(s, a.index, b.index));
    out += fmt::format("{:<16}{:<8}\n", unknownAsNA(a.cpuAffinity), unknownAsNA(a.numaNode));
  }
  out +=
      "\nLegend:\n"
      "  X    = the GPU itself\n"
      "  NV#  = joined by # NVLinks (directly or through NVSwitches)\n"
      "  PIX  = PCIe, through at most one PCIe switch\n"
      "  PXB  = PCIe, through several PCIe bridges but not the CPU's host bridge\n"
      "  PHB  = PCIe, through a PCIe host bridge (the CPU)\n"
      "  NODE = PCIe, between two host bridges of one NUMA node\n"
      "  SYS  = PCIe, across the link between NUMA nodes (QPI/UPI, Infinity Fabric)\n"
      "  ?    = unknown (NVML and sysfs could not tell)\n";

  out += "\nP2P by ordered pair (cudaDeviceCanAccessPeer; theoretical rate per direction):\n";
  for (const Gpu& a : s.gpus) {
    for (const Gpu& b : s.gpus) {
      if (a.index == b.index) continue;
      P2pStatus st = p2pStatus(s, a.index, b.index);
      LinkLimit lim = theoreticalLinkLimit(s, a.index, b.index);
      // A pair without P2P has no P2P rate: its copies go through host memory, whatever the link.
      std::string rate = st.state == P2pStatus::State::kUnsupported ? "no P2P rate (copies go through host memory)"
                         : lim.known() ? fmt::format("{:.1f} GB/s ({})", lim.gbps, lim.description)
                                       : "rate unknown";
      std::string state = st.state == P2pStatus::State::kOk            ? "OK"
                          : st.state == P2pStatus::State::kUnsupported ? "NOT SUPPORTED"
                                                                       : "UNKNOWN";
      out += fmt::format("  GPU{} -> GPU{}  {:<14} {:<5} {}\n", a.index, b.index, state, topoCell(s, a.index, b.index),
                         rate);
      if (!st.reason.empty()) out += fmt::format("      why: {}\n", st.reason);
    }
  }
  return out;
}

std::string topologyToJson(const Snapshot& s) {
  nlohmann::ordered_json root;
  root["gpus"] = nlohmann::ordered_json::array();
  for (const Gpu& g : s.gpus) {
    root["gpus"].push_back({{"index", g.index},
                            {"name", g.name},
                            {"pciBusId", g.pciBusId},
                            {"cpuAffinity", unknownAsNA(g.cpuAffinity)},
                            {"numaNode", unknownAsNA(g.numaNode)}});
  }
  root["matrix"] = nlohmann::ordered_json::array();
  for (const Gpu& a : s.gpus) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (const Gpu& b : s.gpus) row.push_back(topoCell(s, a.index, b.index));
    root["matrix"].push_back(row);
  }
  root["pairs"] = nlohmann::ordered_json::array();
  for (const Gpu& a : s.gpus) {
    for (const Gpu& b : s.gpus) {
      if (a.index == b.index) continue;
      P2pStatus st = p2pStatus(s, a.index, b.index);
      LinkLimit lim = theoreticalLinkLimit(s, a.index, b.index);
      nlohmann::ordered_json pj = {{"src", a.index},
                                   {"dst", b.index},
                                   {"path", topoCell(s, a.index, b.index)},
                                   {"nvlinks", nvlinkCountBetween(s, a.index, b.index)},
                                   {"p2p", st.state == P2pStatus::State::kOk            ? "ok"
                                           : st.state == P2pStatus::State::kUnsupported ? "unsupported"
                                                                                        : "unknown"},
                                   {"p2pCode", st.code},
                                   {"reason", st.reason}};
      if (lim.known()) {
        pj["linkMedium"] = lim.medium;
        // The link's rate is a P2P rate only where P2P works; null where it does not.
        pj["theoreticalGBps"] =
            st.state == P2pStatus::State::kUnsupported ? nlohmann::ordered_json() : nlohmann::ordered_json(lim.gbps);
        pj["linkDescription"] = lim.description;
      } else {
        pj["theoreticalGBps"] = nullptr;
      }
      root["pairs"].push_back(pj);
    }
  }
  return dumpJson(root, 2) + "\n";
}

}  // namespace gpupeer
