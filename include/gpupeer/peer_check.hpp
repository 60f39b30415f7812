#pragma once
/// \file peer_check.hpp
/// Proof that P2P works: for each ordered pair, enable peer access and move a seeded pattern
/// three ways (copy engine, a kernel on the destination reading peer memory, a kernel on the
/// source writing into peer memory), then verify every byte and the guard bytes around it.
/// runPeerCheck drives the GPUs: call it from one thread at a time. The rest is pure.

#include <cstddef>
#include <string>
#include <vector>

#include "gpupeer/snapshot.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// The three ways a pair's data is moved and checked.
enum class CheckMethod { kCopyEngine, kKernelRead, kKernelWrite };
/// A method's verdict on a pair; kSkip carries why in MethodResult::detail.
enum class CheckOutcome { kPass, kFail, kSkip };

const char* checkMethodName(CheckMethod m);    ///< "copy-engine", "kernel-read", "kernel-write"
const char* checkOutcomeName(CheckOutcome o);  ///< "PASS", "FAIL", "SKIP"

/// One transfer shape: size and the offsets into source and destination buffers.
struct CheckCase {
  std::size_t bytes;      ///< moved
  std::size_t srcOffset;  ///< from the start of the source buffer
  std::size_t dstOffset;  ///< from the start of the destination buffer
};

/// Odd sizes, unaligned and mutually misaligned offsets, and a large buffer.
/// `largeBytes` sets the biggest case (default 32 MiB).
std::vector<CheckCase> defaultCheckCases(std::size_t largeBytes = 32u << 20);

/// One method on one pair, over every case.
struct MethodResult {
  CheckMethod method;                          ///< which method
  CheckOutcome outcome = CheckOutcome::kSkip;  ///< its verdict over every case
  std::string detail;                          ///< FAIL: first mismatch (case, offset, expected, actual); SKIP: why
  bool stagedThroughHost = false;              ///< copy engine ran without peer access (driver staged it)
  int casesPassed = 0;                         ///< of CheckReport::cases
};

/// Every method on one ordered pair.
struct PairCheck {
  int src, dst;                       ///< CUDA ordinals
  std::vector<MethodResult> methods;  ///< one per CheckMethod
};

/// The whole check; a plain value owned by the caller.
struct CheckReport {
  std::vector<int> devices;         ///< the GPUs checked
  std::vector<CheckCase> cases;     ///< the shapes every method moved
  std::vector<PairCheck> pairs;     ///< every ordered pair of `devices`
  int count(CheckOutcome o) const;  ///< method results with this outcome, over all pairs
};

/// What to check.
struct CheckOptions {
  std::vector<int> devices;            ///< empty: all GPUs of the snapshot
  std::size_t largeBytes = 32u << 20;  ///< the largest case
  double timeoutSeconds = 20;          ///< per transfer; a stuck one is a FAIL, not a hang
};

/// Parses "0,1,3" and checks each ordinal against `deviceCount`: non-numbers, negatives,
/// ordinals past the count and duplicates are kInvalidArgument naming the culprit.
Result<std::vector<int>> parseDeviceList(const std::string& text, int deviceCount);

/// Runs the check on real devices. Fails only when it cannot run at all (fewer than two
/// GPUs: kUnsupported); failures of pairs are in the report.
Result<CheckReport> runPeerCheck(const Snapshot& snapshot, const CheckOptions& options);

/// The report as the text `gpupeer check` prints: a line per pair and method.
std::string renderCheckReport(const CheckReport& report);
/// The same as JSON text.
std::string checkReportToJson(const CheckReport& report);

}  // namespace gpupeer
