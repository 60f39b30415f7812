// `dcgmi nvlink -s` (--link-status): one row of link states per GPU and per NVSwitch.
//   GPUs:
//       gpuId 0:
//           U U D U ...
//   NvSwitches:
//       physicalId 8:
//           U U X _ ...
//   Key: Up=U, Down=D, Disabled=X, Not Supported=_
#include <fmt/format.h>

#include <map>

#include "tool_output/fields.hpp"
#include "tool_output/parsers.hpp"

namespace gpupeer::tool_output {
namespace {

struct Device {
  bool isSwitch = false;
  int id = 0;
  int up = 0;
  std::vector<int> down;
  int disabled = 0;
};

class DcgmiNvlinkParser : public ToolOutputParser {
 public:
  std::string_view tool() const override { return "dcgmi nvlink -s"; }
  std::vector<std::string> triggers() const override { return {"gpuId ", "physicalId ", "GPUs:", "NvSwitches:"}; }
  bool wantsEveryLine() const override { return current_ >= 0; }

  void feed(std::string_view line, std::uint64_t n) override {
    if (current_ < 0 && line.find("Id ") == std::string_view::npos && line.find("GPUs:") == std::string_view::npos &&
        line.find("NvSwitches:") == std::string_view::npos)
      return;                                    // only a device header or its state row can follow
    std::vector<std::string_view>& f = fields_;  // reused: no allocation per line
    splitFieldsInto(line, f);
    if (f.empty()) return;
    if (f[0] == "GPUs:" || f[0] == "NvSwitches:") {
      inSwitches_ = f[0] == "NvSwitches:";
      return;
    }
    if (f.size() == 2 && (f[0] == "gpuId" || f[0] == "physicalId") && f[1].back() == ':') {
      auto id = parseCount(f[1].substr(0, f[1].size() - 1));
      current_ = -1;
      if (!id || devices_.size() >= static_cast<std::size_t>(kMaxDevices)) return;
      Device d;
      d.isSwitch = inSwitches_ || f[0] == "physicalId";
      d.id = static_cast<int>(*id);
      devices_.push_back(std::move(d));
      current_ = static_cast<int>(devices_.size()) - 1;
      return;
    }
    if (current_ < 0) return;
    // The state row: single-letter fields only.
    for (std::string_view s : f)
      if (s.size() != 1 || (s != "U" && s != "D" && s != "X" && s != "_")) {
        current_ = -1;
        return;
      }
    Device& d = devices_[current_];
    for (std::size_t link = 0; link < f.size(); ++link) {
      if (f[link] == "U") ++d.up;
      if (f[link] == "D") d.down.push_back(static_cast<int>(link));
      if (f[link] == "X") ++d.disabled;
    }
    if (firstLine_ == 0) firstLine_ = n;
    current_ = -1;
  }

  void finish(std::vector<ToolOutputFinding>& out) override {
    if (firstLine_ == 0) return;
    ToolOutputFinding f{std::string(tool()), Severity::kInfo, "", {}, {}, firstLine_};
    int gpus = 0, switches = 0, withDown = 0, up = 0;
    for (const Device& d : devices_) {
      (d.isSwitch ? switches : gpus) += 1;
      up += d.up;
      if (d.down.empty()) continue;
      ++withDown;
      f.details.push_back(fmt::format("{} {}: link(s) {} down, {} up", d.isSwitch ? "NVSwitch" : "GPU", d.id,
                                      fmt::join(d.down, ","), d.up));
    }
    if (withDown == 0) {
      f.title = fmt::format("{} GPU(s), {} NVSwitch(es): all {} links up", gpus, switches, up);
    } else {
      f.severity = Severity::kWarning;
      f.title = fmt::format("{} of {} device(s) have NVLinks down", withDown, devices_.size());
      f.kbIds = {"nvlink/link-inactive", "nvlink/fabric-manager-not-running"};
      f.details.push_back(
          "a GPU with every link down on an NVSwitch system points at Fabric Manager; on PCIe "
          "GPUs without NVLink DCGM may list links as down (check nvidia-smi topo -m)");
    }
    out.push_back(std::move(f));
  }

 private:
  std::vector<std::string_view> fields_;  // feed()'s split of the current line
  std::vector<Device> devices_;
  int current_ = -1;
  bool inSwitches_ = false;
  std::uint64_t firstLine_ = 0;
};

}  // namespace

std::unique_ptr<ToolOutputParser> makeDcgmiNvlinkParser() { return std::make_unique<DcgmiNvlinkParser>(); }

}  // namespace gpupeer::tool_output
