// gpupeer: see, prove, measure and explain GPU peer-to-peer inside one machine.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>
#include <system_error>

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
  // Named, so that help says "gpupeer" and not the path the binary was started by.
  CLI::App app{
      "gpupeer: GPU peer-to-peer inside one machine: see, prove, measure, explain.\n"
      "Exit codes: 0 ok, 1 failed check or finding, 2 usage, 3 not applicable (no or one GPU), "
      "4 error (also a standard output that cannot be written), 5 doctor found warnings only.\n"
      "A reader that stops early (gpupeer ... | head) ends gpupeer quietly by SIGPIPE, as it ends git: "
      "a shell shows status 141.",
      "gpupeer"};
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
  // A first word that is an option of no command: named (CLI11 would say a command is required).
  if (argc > 1 && argv[1][0] == '-' && std::strcmp(argv[1], "-h") != 0 && std::strcmp(argv[1], "--help") != 0 &&
      std::strcmp(argv[1], "--version") != 0) {
    std::fprintf(stderr, "gpupeer: unknown option '%s' (see --help)\n", terminalSafe(argv[1]).c_str());
    return kExitUsage;
  }
  endQuietlyOnBrokenPipe();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help or the parse error, through printTerminal so that a failed write is noted.
    std::ostringstream out, err;
    int code = app.exit(e, out, err);
    printTerminal(out.str());
    std::fputs(terminalSafe(err.str()).c_str(), stderr);
    return finishOutput(code == 0 ? kExitOk : kExitUsage);
  } catch (const std::exception& e) {
    // fmt::print throws std::system_error when standard output cannot be written (a full disk,
    // a closed descriptor): that is the output's error, reported as such.
    auto* io = dynamic_cast<const std::system_error*>(&e);
    if (io && std::ferror(stdout)) {
      noteStdoutError(io->code().value());
      return finishOutput(kExitError);
    }
    // Every other error is a Status; reaching here is a bug, reported rather than aborting.
    std::fflush(stdout);
    std::fprintf(stderr, "gpupeer: internal error: %s\n", terminalSafe(e.what()).c_str());
    return kExitError;
  }
  return finishOutput(exitCode);
}
