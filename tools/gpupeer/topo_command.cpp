// gpupeer topo: the topology matrix users know from `nvidia-smi topo -m`, plus P2P per pair.
#include <fmt/format.h>

#include "cli_common.hpp"
#include "gpupeer/topology.hpp"

namespace gpupeer::cli {
namespace {

struct Options {
  std::string snapshotFile;
  bool json = false;
};

int run(const Options& o) {
  Result<Snapshot> snap = obtainSnapshot(o.snapshotFile, "topo");
  if (!snap.isOk()) return reportError(snap.status());
  const Snapshot& s = snap.value();
  if (s.gpus.empty()) {
    fmt::print(stderr, "gpupeer: no NVIDIA GPU visible: {}\n", terminalSafe(whyNoGpu(s)));
    return kExitNotApplicable;
  }
  if (o.json)
    fmt::print("{}", topologyToJson(s));
  else
    printTerminal(renderTopology(s));
  return kExitOk;
}

CommandRegistrar registrar("topo", 20, [](CLI::App& app, int& exitCode) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("topo", "Topology matrix (NV#, PIX, PXB, PHB, NODE, SYS) and P2P status of every pair");
  sub->add_flag("--json", opts->json, "JSON output for scripts");
  addSnapshotOption(sub, opts->snapshotFile);
  sub->footer(helpFooter({"gpupeer topo", "gpupeer topo --snapshot machine.json --json"},
                         "0 ok, 2 bad input, 3 no GPU, 4 error"));
  sub->callback([opts, &exitCode] { exitCode = run(*opts); });
});

}  // namespace
}  // namespace gpupeer::cli
