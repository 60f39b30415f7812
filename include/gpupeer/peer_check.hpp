#pragma once
/// \file peer_check.hpp
/// Proof that P2P works: for each ordered pair, enable peer access and move a seeded pattern
/// three ways (copy engine, a kernel on the destination reading peer memory, a kernel on the
/// source writing into peer memory), then verify every byte and the guard bytes around it.

#include <cstddef>
#include <string>
#include <vector>

#include "gpupeer/snapshot.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

enum class CheckMethod { kCopyEngine, kKernelRead, kKernelWrite };
enum class CheckOutcome { kPass, kFail, kSkip };

const char* checkMethodName(CheckMethod m);    ///< "copy-engine", "kernel-read", "kernel-write"
const char* checkOutcomeName(CheckOutcome o);  ///< "PASS", "FAIL", "SKIP"

/// One transfer shape: size and the offsets into source and destination buffers.
struct CheckCase {
  std::size_t bytes;
  std::size_t srcOffset;
  std::size_t dstOffset;
};

/// Odd sizes, unaligned and mutually misaligned offsets, and a large buffer.
/// `largeBytes` sets the biggest case (default 32 MiB).
std::vector<CheckCase> defaultCheckCases(std::size_t largeBytes = 32u << 20);

struct MethodResult {
  CheckMethod method;
  CheckOutcome outcome = CheckOutcome::kSkip;
  std::string detail;              ///< FAIL: first mismatch (case, offset, expected, actual); SKIP: why
  bool stagedThroughHost = false;  ///< copy engine ran without peer access (driver staged it)
  int casesPassed = 0;
};

struct PairCheck {
  int src, dst;
  std::vector<MethodResult> methods;
};

struct CheckReport {
  std::vector<int> devices;
  std::vector<CheckCase> cases;
  std::vector<PairCheck> pairs;
  int count(CheckOutcome o) const;
};

struct CheckOptions {
  std::vector<int> devices;  ///< empty: all GPUs of the snapshot
  std::size_t largeBytes = 32u << 20;
  double timeoutSeconds = 20;  ///< per transfer; a stuck one is a FAIL, not a hang
};

/// Parses "0,1,3" and checks each ordinal against `deviceCount`: non-numbers, negatives,
/// ordinals past the count and duplicates are kInvalidArgument naming the culprit.
Result<std::vector<int>> parseDeviceList(const std::string& text, int deviceCount);

/// Runs the check on real devices. Fails only when it cannot run at all (fewer than two
/// GPUs: kUnsupported); failures of pairs are in the report.
Result<CheckReport> runPeerCheck(const Snapshot& snapshot, const CheckOptions& options);

std::string renderCheckReport(const CheckReport& report);
std::string checkReportToJson(const CheckReport& report);

}  // namespace gpupeer
