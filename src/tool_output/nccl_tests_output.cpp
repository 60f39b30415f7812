// nccl-tests result tables (all_reduce_perf and the other *_perf binaries):
//   #       size   count   type  redop  root   time  algbw  busbw #wrong   time  algbw  busbw #wrong
//      33554432 8388608  float    sum    -1  412.3  81.38 142.42      0  410.1  81.82 143.18      0
//   # Out of bounds values : 0 OK
// Wrong results per size, and bus bandwidth against the GPUs' link when their name tells it.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "tool_output/fields.hpp"
#include "tool_output/parsers.hpp"

namespace gpupeer::tool_output {
namespace {

// Per-direction NVLink rate of a GPU model as nccl-tests names it ("NVIDIA H100 80GB HBM3").
// SXM/NVL parts only; PCIe cards and unknown names give 0 (no comparison). Figures: NVIDIA
// data sheets (NVLink total bandwidth halved).
struct LinkRate {
  const char* nameContains;
  double gbps;
  const char* link;
};
constexpr LinkRate kLinkRates[] = {
    {"GB200", 900, "NVLink5"},     {"B200", 900, "NVLink5"},
    {"H200", 450, "NVLink4"},      {"H100 80GB HBM3", 450, "NVLink4"},
    {"H100-SXM", 450, "NVLink4"},  {"H800", 200, "NVLink4"},
    {"H20", 450, "NVLink4"},       {"A100-SXM", 300, "NVLink3"},
    {"A800-SXM", 200, "NVLink3"},  {"V100-SXM2", 150, "NVLink2"},
    {"V100-SXM3", 150, "NVLink2"},
};

// A size whose bus bandwidth is below this share of the link is reported: healthy NVLink
// machines reach 70-100% of it at 64 MiB and above, SHM or host staging stays below 15%.
constexpr double kFarBelowShare = 0.35;
constexpr long long kLargeBytes = 64ll << 20;

// A #wrong count of 19 digits or more is read as this many: wrong all the same, never as none.
constexpr long long kManyWrong = 1'000'000'000'000'000'000ll;

struct Row {
  long long bytes = 0;
  double busbw = 0;  // best of out-of-place and in-place
  long long wrong = 0;
  bool unchecked = false;  // every #wrong "N/A": nccl-tests ran with -c 0
};

std::string wrongText(long long wrong) {
  return wrong >= kManyWrong ? std::string("at least 10^18 wrong") : fmt::format("{} wrong", wrong);
}

class NcclTestsParser : public ToolOutputParser {
 public:
  std::string_view tool() const override { return "nccl-tests"; }
  // Headers start with '#', rows with the size.
  std::vector<std::string> triggers() const override { return {}; }
  std::string_view lineStarts() const override { return "#0123456789"; }

  void feed(std::string_view line, std::uint64_t n) override {
    // Header lines start with '#', rows with the size: skip everything else unsplit.
    std::string_view t = trim(line);
    if (t.empty() || !(t[0] == '#' || (!busbwCols_.empty() && t[0] >= '0' && t[0] <= '9'))) return;
    std::vector<std::string_view>& f = fields_;  // reused: no allocation per line
    splitFieldsInto(line, f);
    if (f.empty()) return;
    if (f[0] == "#") {
      header(f, line, n);
      return;
    }
    if (busbwCols_.empty()) return;
    // A data row has as many fields as the header names; the first is the size in bytes.
    if (f.size() != columns_ || rows_.size() >= 4096) return;
    auto bytes = parseCount(f[0]);
    if (!bytes) return;
    Row r{*bytes};
    for (std::size_t c : busbwCols_)
      if (auto v = parseNumber(f[c])) r.busbw = std::max(r.busbw, *v);
    // A row is unchecked only where no #wrong is a count: one N/A beside a count is the in-place
    // variant that the operation does not have (alltoall on one GPU).
    r.unchecked = !wrongCols_.empty();
    for (std::size_t c : wrongCols_) {
      std::string_view w = f[c];
      if (auto v = parseCount(w)) {
        r.wrong = std::min(r.wrong + *v, kManyWrong);
        r.unchecked = false;
      } else if (!w.empty() && std::all_of(w.begin(), w.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
        r.wrong = kManyWrong;  // more digits than a count holds
        r.unchecked = false;
      }
    }
    rows_.push_back(r);
  }

  void finish(std::vector<ToolOutputFinding>& out) override {
    if (firstLine_ == 0 || (rows_.empty() && outOfBounds_ < 0)) return;
    ToolOutputFinding f{std::string(tool()), Severity::kInfo, "", {}, {}, firstLine_};
    std::vector<std::string> wrongSizes;
    for (const Row& r : rows_)
      if (r.wrong > 0) wrongSizes.push_back(fmt::format("{} ({})", sizeText(r.bytes), wrongText(r.wrong)));
    const auto unchecked = std::count_if(rows_.begin(), rows_.end(), [](const Row& r) { return r.unchecked; });
    if (!wrongSizes.empty() || outOfBounds_ > 0) {
      f.severity = Severity::kError;
      f.kbIds = {"nccl/wrong-results", "platform/iommu-translated-corruption", "platform/acs-redirect"};
      f.details.push_back(wrongSizes.empty() ? fmt::format("{} value(s) out of bounds", outOfBounds_)
                                             : "wrong results at " + joinLimited(wrongSizes, 8));
      f.details.push_back(
          "data corrupted between GPUs with no error raised: a P2P path that drops or misroutes "
          "writes (IOMMU in translated mode, ACS redirect, a VM) is the usual cause; "
          "rerun with NCCL_P2P_DISABLE=1 to see whether P2P is to blame");
    }
    if (unchecked > 0)
      f.details.push_back(
          fmt::format("{} of {} size(s) not checked (#wrong N/A: nccl-tests ran with -c 0); rerun "
                      "with -c 1 to check the results",
                      unchecked, rows_.size()));
    double peak = 0;
    long long peakBytes = 0;
    for (const Row& r : rows_)
      if (r.busbw > peak) peak = r.busbw, peakBytes = r.bytes;
    if (peak > 0) f.details.push_back(fmt::format("peak bus bandwidth {:.1f} GB/s at {}", peak, sizeText(peakBytes)));
    const LinkRate* link = linkOfDevices();
    if (hosts_.size() > 1)
      f.details.push_back(
          fmt::format("ranks on {} hosts: bus bandwidth is bounded by the network between them, "
                      "not compared with NVLink",
                      hosts_.size()));
    if (link && ranks_ > 1 && hosts_.size() <= 1) {
      std::vector<std::string> slow;
      for (const Row& r : rows_)
        if (r.bytes >= kLargeBytes && r.busbw < kFarBelowShare * link->gbps)
          slow.push_back(fmt::format("{} ({:.1f} GB/s)", sizeText(r.bytes), r.busbw));
      if (!slow.empty()) {
        if (f.severity == Severity::kInfo) f.severity = Severity::kWarning;
        f.details.push_back(fmt::format("far below {} ({:.0f} GB/s per direction per GPU): {}", link->link, link->gbps,
                                        joinLimited(slow, 6)));
        f.details.push_back(
            "NCCL is probably not on NVLink (P2P disabled, SHM or network in use): rerun with "
            "NCCL_DEBUG=INFO and paste the log to see the transport of each pair");
        f.kbIds.push_back("nccl/p2p-disabled-by-environment");
        f.kbIds.push_back("nvlink/bandwidth-below-spec");
      }
    }
    f.title =
        f.severity == Severity::kError     ? "wrong results between GPUs"
        : f.severity == Severity::kWarning ? "bus bandwidth far below the GPUs' NVLink"
        : unchecked == 0                   ? fmt::format("{} size(s), no wrong results", rows_.size())
        : unchecked == static_cast<long>(rows_.size())
            ? fmt::format("{} size(s), results not checked", rows_.size())
            : fmt::format("{} size(s), no wrong results in the {} checked", rows_.size(), rows_.size() - unchecked);
    if (ranks_ > 0) f.title += fmt::format(" ({} rank(s){})", ranks_, device_.empty() ? "" : ", " + device_);
    out.push_back(std::move(f));
  }

 private:
  std::vector<std::string_view> fields_;  // feed()'s split of the current line
  void header(const std::vector<std::string_view>& f, std::string_view line, std::uint64_t n) {
    // "#  Rank  0 Group  0 Pid 2181762 on GENOA-01 device  0 [0x01] NVIDIA GeForce RTX 5090"
    if (f.size() >= 4 && f[1] == "Rank" && line.find(" device ") != std::string_view::npos) {
      ++ranks_;
      for (std::size_t i = 2; i + 1 < f.size(); ++i)
        if (f[i] == "on" && hosts_.size() < 64) hosts_.insert(std::string(f[i + 1]));
      std::size_t bracket = line.find("] ");
      if (bracket != std::string_view::npos && device_.empty()) device_ = std::string(trim(line.substr(bracket + 2)));
      return;
    }
    // "# Out of bounds values : 248 FAILED"
    if (line.find("Out of bounds values") != std::string_view::npos) {
      std::size_t colon = line.find(':');
      std::vector<std::string_view> rest = splitFields(line.substr(colon == std::string_view::npos ? 0 : colon + 1));
      if (!rest.empty())
        if (auto v = parseCount(rest[0])) outOfBounds_ = *v;
      if (firstLine_ == 0) firstLine_ = n;
      return;
    }
    // The column header: "size", "busbw" and "#wrong" (or "error" in old versions) named.
    if (f.size() > 6 && f[1] == "size") {
      busbwCols_.clear();
      wrongCols_.clear();
      for (std::size_t c = 1; c < f.size(); ++c) {
        if (f[c] == "busbw") busbwCols_.push_back(c - 1);
        if (f[c] == "#wrong") wrongCols_.push_back(c - 1);
      }
      columns_ = f.size() - 1;
      if (!busbwCols_.empty() && firstLine_ == 0) firstLine_ = n;
    }
  }

  const LinkRate* linkOfDevices() const {
    for (const LinkRate& l : kLinkRates)
      if (device_.find(l.nameContains) != std::string::npos) return &l;
    return nullptr;
  }

  std::vector<std::size_t> busbwCols_, wrongCols_;
  std::size_t columns_ = 0;
  std::vector<Row> rows_;
  long long outOfBounds_ = -1;
  int ranks_ = 0;
  std::set<std::string> hosts_;
  std::string device_;
  std::uint64_t firstLine_ = 0;
};

}  // namespace

std::unique_ptr<ToolOutputParser> makeNcclTestsParser() { return std::make_unique<NcclTestsParser>(); }

}  // namespace gpupeer::tool_output
