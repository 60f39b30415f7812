#pragma once
/// \file doctor.hpp
/// Rules over a Snapshot (and, when GPUs were used, over measurements) that say what is
/// wrong with P2P on this machine and which KB entry explains it. Rules are pure functions.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpupeer/peer_check.hpp"
#include "gpupeer/snapshot.hpp"

namespace gpupeer {

enum class Severity { kInfo = 0, kWarning = 1, kError = 2 };
const char* severityName(Severity s);  ///< "info", "warning", "error"

struct Finding {
  std::string rule;  ///< the rule that made it ("pcie-downtrained")
  Severity severity = Severity::kInfo;
  std::string title;     ///< one line
  std::string evidence;  ///< numbers and pairs
  std::string kbId;      ///< the KB entry that explains it ("" if none)
};

/// What the GPU actions measured, when they ran. Keys are (src, dst).
struct Measurements {
  std::optional<CheckReport> check;
  std::map<std::pair<int, int>, double> copyEngineGBps;  ///< one direction, copy engine
  std::vector<std::string> notRun;                       ///< GPU actions that could not run, with why
};

/// One rule: reads the snapshot (and measurements when non-null) and appends findings.
struct DoctorRule {
  std::string name;
  std::string family;  ///< p2p, nvlink, pcie, numa, driver, env, container, perf
  void (*apply)(const Snapshot&, const Measurements*, std::vector<Finding>&);
};

/// Every rule, in report order.
const std::vector<DoctorRule>& doctorRules();

struct DoctorReport {
  std::string verdict;            ///< the one-line summary printed first
  std::vector<Finding> findings;  ///< worst first
  std::vector<std::string> notRun;
  Severity worst() const;
};

/// Applies every rule. `measured` is null offline (snapshot file), and the report says which
/// checks that leaves out.
DoctorReport diagnose(const Snapshot& snapshot, const Measurements* measured);

/// Bandwidth below this share of the link's theoretical rate is flagged (copy engines reach
/// ~82% of raw NVLink4 and ~80-90% of PCIe on healthy machines, so 70% leaves headroom).
inline constexpr double kLowBandwidthShare = 0.70;
/// Two directions of one pair differing by more than this share are flagged as asymmetric.
inline constexpr double kAsymmetryShare = 0.15;

}  // namespace gpupeer
