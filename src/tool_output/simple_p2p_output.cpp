// cuda-samples simpleP2P:
//   > Peer access from Tesla K40m (GPU0) -> Tesla K40m (GPU2) : No
//   Two or more GPUs with Peer-to-Peer access capability are required for ./simpleP2P.
//   Verification error @ element 1: val = 0.000000, ref = 4.000000
#include <fmt/format.h>

#include "tool_output/fields.hpp"
#include "tool_output/parsers.hpp"

namespace gpupeer::tool_output {
namespace {

class SimpleP2pParser : public ToolOutputParser {
 public:
  std::string_view tool() const override { return "simpleP2P"; }
  std::vector<std::string> triggers() const override {
    return {"Peer access from ", "Peer-to-Peer access capability", "Peer to Peer access is not available",
            "Verification error", "Test passed"};
  }

  void feed(std::string_view line, std::uint64_t n) override {
    std::size_t at = line.find("Peer access from ");
    if (at != std::string_view::npos) {
      peerLine(line.substr(at + 17), n);
      return;
    }
    if (line.find("Peer-to-Peer access capability are required") != std::string_view::npos ||
        line.find("Peer to Peer access is not available") != std::string_view::npos) {
      note(n);
      waived_ = true;
    } else if (line.find("Verification error @ element") != std::string_view::npos) {
      note(n);
      ++verificationErrors_;
    } else if (line.find("simpleP2P") != std::string_view::npos && line.find("Test passed") != std::string_view::npos) {
      passed_ = true;
    }
  }

  void finish(std::vector<ToolOutputFinding>& out) override {
    if (firstLine_ == 0) return;
    ToolOutputFinding f{std::string(tool()), Severity::kInfo, "", {}, {}, firstLine_};
    if (!refused_.empty()) {
      f.severity = Severity::kWarning;
      f.title = fmt::format("{} of {} GPU pair(s) cannot access each other", refused_.size(), pairs_);
      f.details.push_back("no peer access: " + joinLimited(refused_, 12));
      if (!mixed_.empty()) {
        f.details.push_back("different GPU models: " + joinLimited(mixed_, 6));
        f.kbIds.push_back("cuda/peer-mixed-gpu-models");
      }
      f.kbIds.push_back("cuda/peer-partial-matrix");
      f.kbIds.push_back("cuda/peer-access-unsupported-by-hardware");
    } else if (pairs_ > 0) {
      f.title = fmt::format("peer access on all {} GPU pair(s)", pairs_);
    }
    if (waived_) {
      f.severity = Severity::kWarning;
      if (f.title.empty()) f.title = "no GPU pair supports P2P: the test was waived";
      f.details.push_back("simpleP2P needs two GPUs that can access each other");
      if (f.kbIds.empty()) f.kbIds.push_back("cuda/peer-access-unsupported-by-hardware");
    }
    if (verificationErrors_ > 0) {
      f.severity = Severity::kError;
      f.title = "P2P copies returned wrong data" + (f.title.empty() ? "" : "; " + f.title);
      f.details.push_back(
          fmt::format("{} verification error line(s): peer access was granted but the data did "
                      "not arrive (IOMMU translating DMA, ACS redirect, or a VM)",
                      verificationErrors_));
      f.kbIds.insert(f.kbIds.begin(), {"platform/iommu-translated-corruption", "platform/acs-redirect"});
    }
    if (f.title.empty()) f.title = passed_ ? "test passed" : "output read";
    out.push_back(std::move(f));
  }

 private:
  // "Tesla K40m (GPU0) -> Tesla K40m (GPU2) : No"
  void peerLine(std::string_view s, std::uint64_t n) {
    std::size_t arrow = s.find(") -> ");
    std::size_t colon = s.rfind(" : ");
    if (arrow == std::string_view::npos || colon == std::string_view::npos || colon < arrow) return;
    std::string_view from = s.substr(0, arrow + 1), to = s.substr(arrow + 5, colon - arrow - 5);
    std::string_view answer = trim(s.substr(colon + 3));
    auto gpuOf = [](std::string_view side) -> std::pair<std::string, std::string> {
      std::size_t open = side.rfind("(GPU");
      if (open == std::string_view::npos) return {std::string(trim(side)), "?"};
      return {std::string(trim(side.substr(0, open))),
              std::string(side.substr(open + 1, side.size() - open - 2))};  // "GPU0"
    };
    auto [fromName, fromGpu] = gpuOf(from);
    auto [toName, toGpu] = gpuOf(to);
    note(n);
    if (pairs_ >= kMaxDevices * kMaxDevices) return;
    ++pairs_;
    if (answer != "No") return;
    if (refused_.size() < 1024) refused_.push_back(fromGpu + "->" + toGpu);
    if (fromName != toName && mixed_.size() < 64)
      mixed_.push_back(fmt::format("{} ({}) and {} ({})", fromGpu, fromName, toGpu, toName));
  }

  void note(std::uint64_t n) {
    if (firstLine_ == 0) firstLine_ = n;
  }

  int pairs_ = 0;
  std::vector<std::string> refused_, mixed_;
  int verificationErrors_ = 0;
  bool waived_ = false, passed_ = false;
  std::uint64_t firstLine_ = 0;
};

}  // namespace

std::unique_ptr<ToolOutputParser> makeSimpleP2pParser() { return std::make_unique<SimpleP2pParser>(); }

}  // namespace gpupeer::tool_output
