// gpupeer snapshot: capture the machine's multi-GPU state as versioned JSON.
#include <fmt/format.h>

#include <iterator>

#include "cli_common.hpp"
#include "core/output_file.hpp"
#include "gpupeer/topology.hpp"
#include "gpupeer/version_text.hpp"

namespace gpupeer::cli {
namespace {

struct Options {
  std::string output;
  std::string snapshotFile;
  bool json = false;
};

std::string knownText(const Known<std::string>& k) { return k.known() ? k.value() : "unknown (" + k.reason() + ")"; }
std::string knownText(const Known<int>& k) {
  return k.known() ? std::to_string(k.value()) : "unknown (" + k.reason() + ")";
}
// A version code as people write it ("2.28.3", "13.0"), else why it is unknown.
std::string versionText(const Known<int>& k, std::string (*text)(int)) {
  return k.known() ? text(k.value()) : "unknown (" + k.reason() + ")";
}

// Text for a terminal: the snapshot's strings may come from a file anyone wrote.
std::string summary(const Snapshot& s) {
  std::string out;
  auto line = std::back_inserter(out);
  fmt::format_to(line, "host {} at {}\n", s.hostname, s.capturedAt);
  fmt::format_to(line, "driver {}; CUDA driver {}, runtime {}; NVML {}; NCCL {}\n", knownText(s.driverVersion),
                 versionText(s.cudaDriverVersion, cudaVersionText), versionText(s.cudaRuntimeVersion, cudaVersionText),
                 knownText(s.nvmlVersion), versionText(s.ncclVersion, ncclVersionText));
  if (s.gpus.empty()) fmt::format_to(line, "no GPU visible: {}\n", whyNoGpu(s));
  for (const Gpu& g : s.gpus) {
    fmt::format_to(line, "GPU{} {} {} cc {}.{} {:.1f} GiB {} SMs, PCIe Gen{} x{} (max Gen{} x{}), NUMA {}, MIG {}\n",
                   g.index, g.name, g.pciBusId, g.ccMajor, g.ccMinor, g.memoryBytes / 1073741824.0, g.smCount,
                   knownText(g.pcie.currentGen), knownText(g.pcie.currentWidth), knownText(g.pcie.maxGen),
                   knownText(g.pcie.maxWidth), knownText(g.numaNode),
                   g.migEnabled.known() ? (g.migEnabled.value() ? "on" : "off") : "unknown");
  }
  fmt::format_to(line, "IOMMU: {}\n", knownText(s.platform.iommu));
  for (const auto& [k, v] : s.environment) fmt::format_to(line, "env {}={}\n", k, v);
  fmt::format_to(line, "(use --json for the full snapshot)\n");
  return out;
}

int run(const Options& o) {
  Result<Snapshot> snap = obtainSnapshot(o.snapshotFile);
  if (!snap.isOk()) return reportError(snap.status());
  if (!o.output.empty()) {
    Status written = writeOutputFile(o.output, snapshotToJson(snap.value()));
    if (!written.isOk()) return reportError(written);
    printTerminal(fmt::format("snapshot written to {}\n", o.output));
    return kExitOk;
  }
  if (o.json)
    fmt::print("{}", snapshotToJson(snap.value()));
  else
    printTerminal(summary(snap.value()));
  return kExitOk;
}

CommandRegistrar registrar("snapshot", 10, [](CLI::App& app, int& exitCode) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("snapshot", "Capture the machine's multi-GPU state (JSON with --json or -o)");
  sub->add_flag("--json", opts->json, "print the snapshot as JSON");
  sub->add_option("-o,--output", opts->output, "write the JSON snapshot to this file")->check(nonEmptyFileName());
  addSnapshotOption(sub, opts->snapshotFile);
  sub->footer(helpFooter({"gpupeer snapshot", "gpupeer snapshot -o machine.json"},
                         "0 ok, 2 bad input, 4 error (also a file that cannot be written)"));
  sub->callback([opts, &exitCode] { exitCode = run(*opts); });
});

}  // namespace
}  // namespace gpupeer::cli
