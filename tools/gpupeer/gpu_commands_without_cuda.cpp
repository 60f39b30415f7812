// The subcommands that drive GPUs, in the build without CUDA (GPUPEER_WITH_CUDA=OFF), which
// leaves out their own files: each is still there by name and takes any arguments, so that a
// user or a script that runs one learns that this build cannot (exit 3, as where no GPU is
// visible) rather than "unknown command".
#include <memory>

#include "cli_common.hpp"

namespace gpupeer::cli {
namespace {

struct GpuCommand {
  const char* name;
  int order;  // the GPU build's position in --help
  const char* description;
};

constexpr GpuCommand kGpuCommands[] = {
    {"check", 30, "Enable P2P and verify data on every ordered pair (needs a GPU build)"},
    {"bench", 40, "Bandwidth and latency matrices and size sweeps (needs a GPU build)"},
    {"coll", 50, "Collectives over P2P in nccl-tests' table (needs a GPU build)"},
    {"nccl", 80, "How to run NCCL programs unchanged on gpupeer (needs a GPU build)"},
};

[[maybe_unused]] const bool registered = [] {
  for (const GpuCommand& c : kGpuCommands)
    commandRegistry().push_back({c.name, c.order, [c](CLI::App& app, int& exitCode) {
                                   CLI::App* sub = app.add_subcommand(c.name, c.description);
                                   sub->allow_extras();
                                   sub->footer("Exit codes: 3 this build has no CUDA.");
                                   sub->callback([c, &exitCode] { exitCode = reportError(needsCudaBuild(c.name)); });
                                 }});
  return true;
}();

}  // namespace
}  // namespace gpupeer::cli
