// gpupeer: see, prove, measure and explain GPU peer-to-peer inside one machine.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <exception>
#include <string>

#include "cli_output.hpp"
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
  // A first word that names no command: said so, with the commands there are (CLI11 would only
  // say that a command is required).
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(registry.begin(), registry.end(), [&](const CommandSpec& c) { return c.name == argv[1]; })) {
    std::string names;
    for (const CommandSpec& c : registry) names += (names.empty() ? "" : ", ") + c.name;
    std::fprintf(stderr, "gpupeer: unknown command '%s' (commands: %s; see --help)\n", terminalSafe(argv[1]).c_str(),
                 names.c_str());
    return kExitUsage;
  }
  // A closed pipe on standard output is a write error that finishOutput reports, not a
  // signal that ends the process without a word.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help or the parse error
    return finishOutput(code == 0 ? kExitOk : kExitUsage);
  } catch (const std::exception& e) {
    // Every error is a Status; reaching here is a bug, reported rather than aborting.
    std::fflush(stdout);
    std::fprintf(stderr, "gpupeer: internal error: %s\n", e.what());
    return kExitError;
  }
  return finishOutput(exitCode);
}
