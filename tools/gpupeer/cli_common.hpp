#pragma once
// Pieces every subcommand shares: where the snapshot comes from, how errors are printed.

#include <cstdio>
#include <string>

#include "command_registry.hpp"
#include "gpupeer/probe.hpp"
#include "gpupeer/snapshot_json.hpp"

namespace gpupeer::cli {

/// The snapshot from `file` when given (the machine is then never touched), else probed.
inline Result<Snapshot> obtainSnapshot(const std::string& file) {
  if (!file.empty()) return loadSnapshotFile(file);
  return probeMachine();
}

/// Prints a failed Status on stderr and returns the exit code for it.
inline int reportError(const Status& status) {
  std::fprintf(stderr, "gpupeer: error: %s\n", status.toString().c_str());
  switch (status.code()) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kParse:
    case ErrorCode::kNotFound: return kExitUsage;
    case ErrorCode::kUnsupported: return kExitNotApplicable;
    default: return kExitError;
  }
}

inline void addSnapshotOption(CLI::App* sub, std::string& file) {
  sub->add_option("--snapshot", file,
                  "analyse this snapshot file (from 'gpupeer snapshot --json') instead of the "
                  "machine; nothing on the machine is touched");
}

}  // namespace gpupeer::cli
