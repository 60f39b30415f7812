// cuda-samples p2pBandwidthLatencyTest:
//   Device=0 CANNOT Access Peer Device=2
//   Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
//      D\D     0      1
//        0 911.08  20.10
//   Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
//      ...
// Pairs without peer access, and pairs whose P2P copies are no faster than copies staged
// through the host (the P2P=Disabled matrix), which a working P2P path always beats.
#include <fmt/format.h>

#include <map>

#include "tool_output/fields.hpp"
#include "tool_output/parsers.hpp"

namespace gpupeer::tool_output {
namespace {

// P2P below this share of the staged rate is reported. Healthy PCIe P2P runs at 1.0-1.9x
// the staged copy, NVLink at 5-20x; below 1.0x the peer path is throttled or misrouted.
constexpr double kSlowRatio = 1.0;
// Matrices are kept for at most this many GPUs (4 matrices of 64x64 cells).
constexpr int kMaxMatrixGpus = 64;

enum class Matrix { kNone, kUniDisabled, kUniEnabled, kBiDisabled, kBiEnabled, kOther };

class P2pBandwidthParser : public ToolOutputParser {
 public:
  std::string_view tool() const override { return "p2pBandwidthLatencyTest"; }
  std::vector<std::string> triggers() const override { return {"Device=", " Matrix ("}; }
  bool wantsEveryLine() const override { return current_ != Matrix::kNone && current_ != Matrix::kOther; }

  void feed(std::string_view line, std::uint64_t n) override {
    if ((current_ == Matrix::kNone || current_ == Matrix::kOther) && line.find("Device=") == std::string_view::npos &&
        line.find(" Matrix (") == std::string_view::npos)
      return;                                    // outside a matrix only these two kinds of line matter
    std::vector<std::string_view>& f = fields_;  // reused: no allocation per line
    splitFieldsInto(line, f);
    // "Device=0 CANNOT Access Peer Device=2"
    if (f.size() == 5 && startsWith(f[0], "Device=") && f[2] == "Access" && f[3] == "Peer") {
      auto a = parseIndexed(f[0], "Device="), b = parseIndexed(f[4], "Device=");
      if (!a || !b) return;
      note(n);
      ++pairs_;
      if (f[1] == "CANNOT" && refused_.size() < 1024) refused_.push_back(fmt::format("GPU{}->GPU{}", *a, *b));
      return;
    }
    if (line.find(" Matrix (") != std::string_view::npos) {
      bool uni = line.find("Unidirectional") != std::string_view::npos;
      bool bi = line.find("Bidirectional") != std::string_view::npos;
      bool enabled = line.find("P2P=Enabled") != std::string_view::npos;
      bool disabled = line.find("P2P=Disabled") != std::string_view::npos;
      bool bandwidth = line.find("Bandwidth") != std::string_view::npos;
      current_ = !bandwidth || (!uni && !bi) || (!enabled && !disabled) ? Matrix::kOther
                 : uni ? (enabled ? Matrix::kUniEnabled : Matrix::kUniDisabled)
                       : (enabled ? Matrix::kBiEnabled : Matrix::kBiDisabled);
      // The reads matrix repeats the writes one's layout; keep the writes.
      if (line.find("P2P Reads") != std::string_view::npos) current_ = Matrix::kOther;
      note(n);
      return;
    }
    if (current_ == Matrix::kNone || current_ == Matrix::kOther) return;
    if (!f.empty() && f[0] == "D\\D") return;  // column header
    auto row = f.empty() ? std::nullopt : parseCount(f[0]);
    if (!row || *row >= kMaxMatrixGpus) {
      current_ = Matrix::kNone;
      return;
    }
    for (std::size_t c = 1; c < f.size() && c <= static_cast<std::size_t>(kMaxMatrixGpus); ++c)
      if (auto v = parseNumber(f[c])) rates_[current_][{static_cast<int>(*row), static_cast<int>(c - 1)}] = *v;
  }

  void finish(std::vector<ToolOutputFinding>& out) override {
    if (firstLine_ == 0) return;
    ToolOutputFinding f{std::string(tool()), Severity::kInfo, "", {}, {}, firstLine_};
    std::vector<std::string> slow;
    double minRatio = 0;
    int compared = 0;
    for (auto [enabled, disabled] :
         {std::pair{Matrix::kUniEnabled, Matrix::kUniDisabled}, std::pair{Matrix::kBiEnabled, Matrix::kBiDisabled}}) {
      for (const auto& [pair, on] : rates_[enabled]) {
        if (pair.first == pair.second) continue;
        auto off = rates_[disabled].find(pair);
        if (off == rates_[disabled].end() || off->second <= 0) continue;
        double ratio = on / off->second;
        minRatio = compared++ == 0 ? ratio : std::min(minRatio, ratio);
        if (ratio < kSlowRatio && slow.size() < 256)
          slow.push_back(fmt::format("{} GPU{}->GPU{} {:.2f} vs {:.2f} GB/s",
                                     enabled == Matrix::kUniEnabled ? "uni" : "bi", pair.first, pair.second, on,
                                     off->second));
      }
    }
    if (!refused_.empty()) {
      f.severity = Severity::kWarning;
      f.details.push_back(
          fmt::format("no peer access ({} of {}): {}", refused_.size(), pairs_, joinLimited(refused_, 12)));
      f.kbIds = {"cuda/peer-partial-matrix", "cuda/peer-access-unsupported-by-hardware"};
    }
    if (!slow.empty()) {
      f.severity = Severity::kWarning;
      f.details.push_back("P2P=Enabled no faster than P2P=Disabled (host staging): " + joinLimited(slow, 6));
      f.details.push_back(
          "a working P2P path beats staging through the host; slower P2P means peer traffic is "
          "routed up to the root complex (ACS), translated by the IOMMU, or throttled by a VM");
      f.kbIds.push_back("platform/acs-redirect");
      f.kbIds.push_back("platform/iommu-translated-corruption");
    }
    if (refused_.empty() && slow.empty())
      f.title = compared > 0 ? fmt::format("peer access on all pairs; P2P at least {:.1f}x the staged copy", minRatio)
                             : fmt::format("peer access on all {} pair(s)", pairs_);
    else
      f.title = fmt::format("{} pair(s) without peer access, {} matrix cell(s) where P2P is slower than staging",
                            refused_.size(), slow.size());
    out.push_back(std::move(f));
  }

 private:
  std::vector<std::string_view> fields_;  // feed()'s split of the current line
  void note(std::uint64_t n) {
    if (firstLine_ == 0) firstLine_ = n;
  }

  int pairs_ = 0;
  std::vector<std::string> refused_;
  Matrix current_ = Matrix::kNone;
  std::map<Matrix, std::map<std::pair<int, int>, double>> rates_;
  std::uint64_t firstLine_ = 0;
};

}  // namespace

std::unique_ptr<ToolOutputParser> makeP2pBandwidthParser() { return std::make_unique<P2pBandwidthParser>(); }

}  // namespace gpupeer::tool_output
