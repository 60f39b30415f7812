// `nvidia-smi nvlink -s`: per GPU, each link's speed or "<inactive>".
//   GPU 3: Tesla V100-SXM2-32GB (UUID: GPU-...)
//            Link 0: 25.781 GB/s
//            Link 3: <inactive>
#include <fmt/format.h>

#include <map>

#include "tool_output/fields.hpp"
#include "tool_output/parsers.hpp"

namespace gpupeer::tool_output {
namespace {

struct GpuLinks {
  std::string name;
  std::vector<int> inactive;
  std::map<double, int> speeds;  // GB/s -> links at that speed
  bool allInactive = false;      // "Unable to retrieve NVLink information as all links are inActive"
};

class NvlinkStatusParser : public ToolOutputParser {
 public:
  std::string_view tool() const override { return "nvidia-smi nvlink -s"; }
  std::vector<std::string> triggers() const override { return {"GPU ", "Link ", "inActive", "inactive"}; }

  void feed(std::string_view line, std::uint64_t n) override {
    // Neither a GPU header nor, under one, a link line or "all links are inactive": skipped
    // without splitting (the tests below on f[0] decide the same).
    std::string_view first = firstField(line);
    if (first != "GPU" &&
        (current_ < 0 || (first != "Link" && line.find("all links are in") == std::string_view::npos)))
      return;
    std::vector<std::string_view>& f = fields_;  // reused: no allocation per line
    splitFieldsInto(line, f);
    if (f.size() >= 3 && f[0] == "GPU" && f[1].size() >= 2 && f[1].back() == ':') {
      auto idx = parseCount(f[1].substr(0, f[1].size() - 1));
      if (!idx || gpus_.size() >= static_cast<std::size_t>(kMaxDevices)) return;
      current_ = static_cast<int>(*idx);
      gpus_[current_] = GpuLinks{};  // a GPU listed again (a second paste) replaces its first listing
      std::string_view rest = line.substr(line.find(':') + 1);
      gpus_[current_].name = std::string(trim(rest.substr(0, rest.find(" (UUID"))));
      return;
    }
    if (current_ < 0) return;
    if (line.find("all links are inActive") != std::string_view::npos ||
        line.find("all links are inactive") != std::string_view::npos) {
      gpus_[current_].allInactive = true;
      note(n);
      return;
    }
    // "Link 3: <inactive>" / "Link 0: 25.781 GB/s"
    if (f.size() >= 3 && f[0] == "Link" && f[1].size() >= 2 && f[1].back() == ':') {
      auto link = parseCount(f[1].substr(0, f[1].size() - 1));
      if (!link) return;
      GpuLinks& g = gpus_[current_];
      if (f[2] == "<inactive>" || f[2] == "<disabled>") {
        if (g.inactive.size() < 64) g.inactive.push_back(static_cast<int>(*link));
      } else if (auto speed = parseNumber(f[2]); speed && f.size() >= 4 && f[3] == "GB/s") {
        if (g.speeds.size() < 16) ++g.speeds[*speed];
      } else {
        return;
      }
      note(n);
    }
  }

  void finish(std::vector<ToolOutputFinding>& out) override {
    if (firstLine_ == 0) return;
    ToolOutputFinding f{std::string(tool()), Severity::kInfo, "", {}, {}, firstLine_};
    int withDown = 0, active = 0, down = 0;
    std::map<double, int> speeds;
    for (const auto& [gpu, g] : gpus_) {
      for (const auto& [s, count] : g.speeds) {
        speeds[s] += count;
        active += count;
      }
      down += static_cast<int>(g.inactive.size());
      if (g.allInactive) {
        ++withDown;
        f.details.push_back(fmt::format("GPU{} ({}): every link inactive", gpu, g.name));
      } else if (!g.inactive.empty()) {
        ++withDown;
        int total = static_cast<int>(g.inactive.size());
        for (const auto& [s, count] : g.speeds) total += count;
        f.details.push_back(fmt::format("GPU{} ({}): link(s) {} inactive, {} of {} up", gpu, g.name,
                                        fmt::join(g.inactive, ","), total - g.inactive.size(), total));
      }
    }
    if (withDown == 0) {
      f.title = fmt::format("{} GPU(s), all {} NVLinks up", gpus_.size(), active);
    } else {
      f.severity = Severity::kWarning;
      f.title = fmt::format("{} of {} GPU(s) have inactive NVLinks ({} link(s) down)", withDown, gpus_.size(), down);
      f.kbIds = {"nvlink/link-inactive", "nvlink/fabric-manager-not-running"};
      f.details.push_back(
          "pairs over those links get less bandwidth, or lose P2P when none is left; on NVSwitch "
          "systems every link down on a GPU usually means Fabric Manager is not running");
    }
    // Links a little apart are normal (NVLink5 lists 50 and 53.125 GB/s on a healthy B200); a
    // link that trained down runs at a fraction of the others.
    const bool downtrained = speeds.size() > 1 && speeds.begin()->first < 0.9 * speeds.rbegin()->first;
    if (downtrained) {
      std::string list;
      for (const auto& [s, count] : speeds)
        list += fmt::format("{}{} link(s) at {:g} GB/s", list.empty() ? "" : ", ", count, s);
      f.details.push_back("links run at different speeds: " + list);
      if (f.severity == Severity::kInfo) f.severity = Severity::kWarning;
      if (f.kbIds.empty()) f.kbIds.push_back("nvlink/link-inactive");
    } else if (speeds.size() == 1) {
      f.details.push_back(fmt::format("every active link at {:g} GB/s", speeds.begin()->first));
    } else if (!speeds.empty()) {
      f.details.push_back(
          fmt::format("active links at {:g} to {:g} GB/s", speeds.begin()->first, speeds.rbegin()->first));
    }
    out.push_back(std::move(f));
  }

 private:
  std::vector<std::string_view> fields_;  // feed()'s split of the current line
  void note(std::uint64_t n) {
    if (firstLine_ == 0) firstLine_ = n;
  }

  std::map<int, GpuLinks> gpus_;
  int current_ = -1;
  std::uint64_t firstLine_ = 0;
};

}  // namespace

std::unique_ptr<ToolOutputParser> makeNvlinkStatusParser() { return std::make_unique<NvlinkStatusParser>(); }

}  // namespace gpupeer::tool_output
