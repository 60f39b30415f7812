// gpupeer: see, prove, measure and explain GPU peer-to-peer inside one machine.
#include <algorithm>
#include <cstdio>

#include "command_registry.hpp"
#include "gpupeer/log.hpp"
#include "gpupeer/version.hpp"

namespace gpupeer::cli {

std::vector<CommandSpec>& commandRegistry() {
  static std::vector<CommandSpec> registry;
  return registry;
}

}  // namespace gpupeer::cli

int main(int argc, char** argv) {
  using namespace gpupeer::cli;
  CLI::App app{
      "gpupeer: GPU peer-to-peer inside one machine: see, prove, measure, explain.\n"
      "Exit codes: 0 ok, 1 failed check or finding, 2 usage, 3 not applicable "
      "(no or one GPU), 4 error."};
  app.set_version_flag("--version", std::string("gpupeer ") + gpupeer::kVersion);
  app.require_subcommand(1);
  int exitCode = kExitOk;
  auto& registry = commandRegistry();
  std::sort(registry.begin(), registry.end(),
            [](const CommandSpec& a, const CommandSpec& b) { return a.order < b.order; });
  for (const CommandSpec& spec : registry) spec.attach(app, exitCode);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help or the parse error
    return code == 0 ? kExitOk : kExitUsage;
  }
  return exitCode;
}
