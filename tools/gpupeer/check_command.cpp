// gpupeer check: enable P2P on every ordered pair and prove it moves the right bytes; with --ipc,
// prove that two processes can share GPU memory.
#include <fmt/format.h>

#include "cli_common.hpp"
#include "gpupeer/ipc_check.hpp"
#include "gpupeer/peer_check.hpp"

namespace gpupeer::cli {
namespace {

struct Options {
  std::string devices;
  bool json = false;
  bool ipc = false;
  std::size_t largeMiB = 32;
};

// --ipc: one GPU (the first of --devices, else 0) shared with a second process both ways.
int runIpc(const Options& o) {
  if (!o.devices.empty())
    if (auto list = parseDeviceList(o.devices, kAnyDeviceCount); !list.isOk()) return reportError(list.status());
  Snapshot s = probeMachine();
  if (s.gpus.empty()) {
    fmt::print(stderr, "gpupeer check --ipc: {}", renderIpcNoGpu(s));
    return kExitNotApplicable;
  }
  int device = 0;
  if (!o.devices.empty()) {
    Result<std::vector<int>> list = parseDeviceList(o.devices, static_cast<int>(s.gpus.size()));
    if (!list.isOk()) return reportError(list.status());
    device = list.value().front();
  }
  Result<IpcCheckReport> report = runIpcCheck(s, device);
  if (!report.isOk()) return reportError(report.status());
  if (o.json)
    fmt::print("{}", ipcCheckReportToJson(report.value()));
  else
    printTerminal(renderIpcCheckReport(report.value()));
  return report.value().count(CheckOutcome::kFail) > 0 ? kExitFailed : kExitOk;
}

int run(const Options& o) {
  if (o.ipc) return runIpc(o);
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
    fmt::print(stderr, "gpupeer check: no NVIDIA GPU visible: {}\n", terminalSafe(whyNoGpu(s)));
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
      fmt::print(stderr, "gpupeer check: {} (nothing to check with one GPU)\n",
                 terminalSafe(report.status().message()));
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
  sub->add_flag("--ipc", opts->ipc,
                "check instead that a second process can share GPU memory (cudaIpc handles, cuMem file descriptors)");
  sub->footer(helpFooter({"gpupeer check", "gpupeer check -d 0,1,3 --size-mib 256 --json", "gpupeer check --ipc"},
                         "0 every case passed, 1 a case failed, 2 bad input, 3 fewer than two GPUs (one for --ipc), "
                         "4 error"));
  sub->callback([opts, &exitCode] { exitCode = run(*opts); });
});

}  // namespace
}  // namespace gpupeer::cli
