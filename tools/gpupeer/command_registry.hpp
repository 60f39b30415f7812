#pragma once
// Each subcommand lives in its own file and registers itself here at start-up, so adding a
// command touches no other file.

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace gpupeer::cli {

/// Documented exit codes of every subcommand.
enum ExitCode : int {
  kExitOk = 0,             ///< success / healthy / something matched
  kExitFailed = 1,         ///< a check failed, a finding of error severity, nothing matched
  kExitUsage = 2,          ///< bad command line or bad input named on it
  kExitNotApplicable = 3,  ///< the machine cannot run this (no GPU, fewer than two GPUs)
  kExitError = 4,          ///< gpupeer could not do its work (I/O, unexpected API failure)
  kExitWarnings = 5,       ///< doctor: findings of warning severity, none of error
};

struct CommandSpec {
  std::string name;
  int order;  ///< position in --help
  /// Adds the subcommand to `app`; its callback stores the exit code in `exitCode`.
  std::function<void(CLI::App& app, int& exitCode)> attach;
};

std::vector<CommandSpec>& commandRegistry();

struct CommandRegistrar {
  CommandRegistrar(std::string name, int order, std::function<void(CLI::App&, int&)> attach) {
    commandRegistry().push_back({std::move(name), order, std::move(attach)});
  }
};

}  // namespace gpupeer::cli
