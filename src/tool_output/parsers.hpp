#pragma once
// The tool-output parsers, one per file; makeToolOutputParsers() lists them.
#include <memory>
#include <string>
#include <string_view>

#include "gpupeer/tool_output.hpp"

namespace gpupeer::tool_output {

/// Appends a KB id to a finding unless it is listed already.
inline void addKbId(ToolOutputFinding& f, const std::string& id) {
  for (const std::string& k : f.kbIds)
    if (k == id) return;
  f.kbIds.push_back(id);
}

/// The NCCL_DEBUG=INFO line that names a channel's transport, with groups: rank a, its device,
/// rank b, its device, "send"/"receive" or nothing, the transport ("P2P/IPC/read").
inline constexpr const char* kNcclChannelPattern =
    R"(Channel \d+(?:/\d+)? : (\d+)\[([0-9a-fA-Fx]+)\] -> (\d+)\[([0-9a-fA-Fx]+)\](?: \[(send|receive)\])? via )"
    R"((direct shared memory|(?:P2P|SHM|NET|COLLNET|NVLS)/[^ ]+(?: pointer)?[^ ]*))";
struct NcclChannel {
  std::string a, aDev, b, bDev, dir, via;
};
enum class ChannelRead { kNo, kYes, kAskTheRegex };
/// The groups of the leftmost match of kNcclChannelPattern in `line`, read without RE2; when
/// the transport holds a non-ASCII byte, kAskTheRegex (RE2's [^ ] takes only valid UTF-8).
ChannelRead readNcclChannel(std::string_view line, NcclChannel& out);

std::unique_ptr<ToolOutputParser> makeTopoLinksParser();      // nvidia-smi topo -m
std::unique_ptr<ToolOutputParser> makeTopoP2pParser();        // nvidia-smi topo -p2p r|w|n|a|p
std::unique_ptr<ToolOutputParser> makeNvlinkStatusParser();   // nvidia-smi nvlink -s
std::unique_ptr<ToolOutputParser> makeDcgmiNvlinkParser();    // dcgmi nvlink -s
std::unique_ptr<ToolOutputParser> makeNcclTestsParser();      // nccl-tests *_perf tables
std::unique_ptr<ToolOutputParser> makeSimpleP2pParser();      // cuda-samples simpleP2P
std::unique_ptr<ToolOutputParser> makeP2pBandwidthParser();   // cuda-samples p2pBandwidthLatencyTest
std::unique_ptr<ToolOutputParser> makeNcclTransportParser();  // NCCL_DEBUG=INFO channel lines

}  // namespace gpupeer::tool_output
