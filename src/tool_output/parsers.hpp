#pragma once
// The tool-output parsers, one per file; makeToolOutputParsers() lists them.
#include <memory>

#include "gpupeer/tool_output.hpp"

namespace gpupeer::tool_output {

/// Appends a KB id to a finding unless it is listed already.
inline void addKbId(ToolOutputFinding& f, const std::string& id) {
  for (const std::string& k : f.kbIds)
    if (k == id) return;
  f.kbIds.push_back(id);
}

std::unique_ptr<ToolOutputParser> makeTopoLinksParser();      // nvidia-smi topo -m
std::unique_ptr<ToolOutputParser> makeTopoP2pParser();        // nvidia-smi topo -p2p r|w|n|a|p
std::unique_ptr<ToolOutputParser> makeNvlinkStatusParser();   // nvidia-smi nvlink -s
std::unique_ptr<ToolOutputParser> makeDcgmiNvlinkParser();    // dcgmi nvlink -s
std::unique_ptr<ToolOutputParser> makeNcclTestsParser();      // nccl-tests *_perf tables
std::unique_ptr<ToolOutputParser> makeSimpleP2pParser();      // cuda-samples simpleP2P
std::unique_ptr<ToolOutputParser> makeP2pBandwidthParser();   // cuda-samples p2pBandwidthLatencyTest
std::unique_ptr<ToolOutputParser> makeNcclTransportParser();  // NCCL_DEBUG=INFO channel lines

}  // namespace gpupeer::tool_output
