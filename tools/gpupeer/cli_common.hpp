#pragma once
// Pieces every subcommand shares: where the snapshot comes from, how errors are printed.

#include <cstdio>
#include <initializer_list>
#include <string>

#include "cli_output.hpp"
#include "command_registry.hpp"
#include "gpupeer/probe.hpp"
#include "gpupeer/snapshot_json.hpp"

namespace gpupeer::cli {

/// What `what` (a subcommand, or a subcommand without --snapshot) answers in a build without
/// CUDA: ErrorCode::kUnsupported (exit 3), naming the subcommands that work there.
inline Status needsCudaBuild(const std::string& what) {
  return GPUPEER_ERROR(
      ErrorCode::kUnsupported,
      std::string(kBuiltWithoutCuda) + ": " + what +
          " needs a GPU build; offline: doctor --snapshot, topo --snapshot, explain, report --snapshot");
}

/// The snapshot from `file` when given (the machine is then never touched), else probed; a
/// build without CUDA cannot probe, and says so for `command`.
inline Result<Snapshot> obtainSnapshot(const std::string& file, const std::string& command) {
  if (!file.empty()) return loadSnapshotFile(file);
  if (!builtWithCuda()) return needsCudaBuild(command + " without --snapshot");
  return probeMachine();
}

/// Prints a failed Status on stderr and returns the exit code for it. Bad input and a machine
/// that cannot do this are the user's to fix: said without gpupeer's source line, which stays
/// on gpupeer's own failures, for a bug report.
inline int reportError(const Status& status) {
  int exitCode = kExitError;
  switch (status.code()) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kParse:
    case ErrorCode::kNotFound: exitCode = kExitUsage; break;
    case ErrorCode::kUnsupported: exitCode = kExitNotApplicable; break;
    default: break;
  }
  std::string text = status.toString();
  const std::string at = " at " + status.location();  // toString ends with it
  if (exitCode != kExitError && !status.location().empty() && text.ends_with(at)) text.resize(text.size() - at.size());
  std::fprintf(stderr, "gpupeer: error: %s\n", terminalSafe(text).c_str());
  return exitCode;
}

/// A device count for checking a device list's form before the machine is probed.
inline constexpr int kAnyDeviceCount = 1 << 20;

/// Refuses an empty file name, which would otherwise read as "option not given".
inline CLI::Validator nonEmptyFileName() {
  return CLI::Validator([](std::string& v) { return v.empty() ? std::string("an empty file name") : std::string(); },
                        "FILE", "non-empty");
}

/// Refuses a comma-separated list with nothing in it ("", ",,,"), which would otherwise read as
/// "option not given": every device, every testcase.
inline CLI::Validator namesSomething(const char* what) {
  return CLI::Validator(
      [what](std::string& v) {
        return v.find_first_not_of(", ") == std::string::npos ? "'" + v + "' names no " + what : std::string();
      },
      "LIST", "non-empty list");
}

/// The end of every subcommand's --help: command lines to copy, then the exit codes this
/// subcommand can give (a subset of ExitCode's, in its words).
inline std::string helpFooter(std::initializer_list<const char*> examples, const std::string& exitCodes) {
  std::string text = "Examples:\n";
  for (const char* example : examples) text += std::string("  ") + example + "\n";
  return text + "Exit codes: " + exitCodes + ".";
}

inline void addSnapshotOption(CLI::App* sub, std::string& file) {
  sub->add_option("--snapshot", file,
                  "analyse this snapshot file (from 'gpupeer snapshot --json') instead of the "
                  "machine; nothing on the machine is touched")
      // An empty name would mean "probe the machine": refused, not silently taken so.
      ->check(nonEmptyFileName());
}

}  // namespace gpupeer::cli
