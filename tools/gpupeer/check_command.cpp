// gpupeer check: enable P2P on every ordered pair and prove it moves the right bytes.
#include <fmt/format.h>

#include "cli_common.hpp"
#include "gpupeer/peer_check.hpp"

namespace gpupeer::cli {
namespace {

struct Options {
  std::string devices;
  bool json = false;
  std::size_t largeMiB = 32;
};

int run(const Options& o) {
  if (o.largeMiB == 0 || o.largeMiB > 4096) {
    fmt::print(stderr, "gpupeer check: --size-mib must be between 1 and 4096\n");
    return kExitUsage;
  }
  // The device list's form before the machine is touched; its numbers against the GPUs after.
  if (!o.devices.empty())
    if (auto list = parseDeviceList(o.devices, kAnyDeviceCount); !list.isOk()) return reportError(list.status());
  Snapshot s = probeMachine();
  int visible = static_cast<int>(s.gpus.size());
  if (visible == 0) {
    fmt::print(stderr, "gpupeer check: no NVIDIA GPU visible: {}\n", whyNoGpu(s));
    return kExitNotApplicable;
  }
  CheckOptions options;
  if (!o.devices.empty()) {
    Result<std::vector<int>> list = parseDeviceList(o.devices, visible);
    if (!list.isOk()) return reportError(list.status());
    options.devices = list.value();
  }
  options.largeBytes = o.largeMiB << 20;
  Result<CheckReport> report = runPeerCheck(s, options);
  if (!report.isOk()) {
    if (report.status().code() == ErrorCode::kUnsupported) {
      fmt::print(stderr, "gpupeer check: {} (nothing to check with one GPU)\n", report.status().message());
      return kExitNotApplicable;
    }
    return reportError(report.status());
  }
  if (o.json)
    fmt::print("{}", checkReportToJson(report.value()));
  else
    printTerminal(renderCheckReport(report.value()));
  return report.value().count(CheckOutcome::kFail) > 0 ? kExitFailed : kExitOk;
}

CommandRegistrar registrar("check", 30, [](CLI::App& app, int& exitCode) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("check", "Enable P2P and verify data on every ordered pair by copy engine and kernels");
  sub->add_option("-d,--devices", opts->devices, "GPUs to check, e.g. 0,1,3 (default: all)")
      ->check(namesSomething("device"));
  sub->add_option("--size-mib", opts->largeMiB, "largest transfer in MiB (default 32)");
  sub->add_flag("--json", opts->json, "JSON output");
  sub->footer(helpFooter({"gpupeer check", "gpupeer check -d 0,1,3 --size-mib 256 --json"},
                         "0 every case passed, 1 a case failed, 2 bad input, 3 fewer than two GPUs, 4 error"));
  sub->callback([opts, &exitCode] { exitCode = run(*opts); });
});

}  // namespace
}  // namespace gpupeer::cli
