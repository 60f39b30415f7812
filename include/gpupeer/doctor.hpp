#pragma once
/// \file doctor.hpp
/// Rules over a Snapshot (and, when GPUs were used, over measurements) that say what is
/// wrong with P2P on this machine and which KB entry explains it. Rules are pure functions;
/// diagnose() and the rule list may be used from any thread. Reports are values owned by the caller.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpupeer/ipc_check.hpp"
#include "gpupeer/peer_check.hpp"
#include "gpupeer/snapshot.hpp"

namespace gpupeer {

/// How bad a finding is: kError breaks P2P or its data, kWarning costs performance.
enum class Severity { kInfo = 0, kWarning = 1, kError = 2 };
const char* severityName(Severity s);  ///< "info", "warning", "error"

/// A GPU a finding concerns: its CUDA ordinal and PCI bus id, as the snapshot has them.
struct FindingGpu {
  int index = -1;
  std::string busId;  ///< "0000:18:00.0"; "" when the snapshot has none
};

/// One thing the doctor found.
struct Finding {
  Finding() = default;
  /// Most rules name the five first; `fix` and `gpus` follow where the rule knows them.
  Finding(std::string rule_, Severity severity_, std::string title_, std::string evidence_, std::string kbId_,
          std::string fix_ = {}, std::vector<FindingGpu> gpus_ = {})
      : rule(std::move(rule_)),
        severity(severity_),
        title(std::move(title_)),
        evidence(std::move(evidence_)),
        kbId(std::move(kbId_)),
        fix(std::move(fix_)),
        gpus(std::move(gpus_)) {}

  std::string rule;                     ///< the rule that made it ("pcie-downtrained")
  Severity severity = Severity::kInfo;  ///< how bad
  std::string title;                    ///< one line
  std::string evidence;                 ///< numbers and pairs
  std::string kbId;                     ///< the KB entry that explains it ("" if none)
  /// Commands written for this machine (its bus ids, NUMA node, versions); "" when the KB
  /// entry's first workaround fits as it is.
  std::string fix;
  std::vector<FindingGpu> gpus;  ///< the GPUs it concerns, by ordinal; empty for the machine as a whole
};

/// What the GPU actions measured, when they ran. Keys are (src, dst).
struct Measurements {
  std::optional<CheckReport> check;                      ///< the P2P data check, when it ran
  std::optional<IpcCheckReport> ipc;                     ///< the cross-process check, when it ran
  std::map<std::pair<int, int>, double> copyEngineGBps;  ///< one direction, copy engine
  std::vector<std::string> notRun;                       ///< GPU actions that could not run, with why
};

/// What a diagnosis of a snapshot alone leaves out (diagnose(s, nullptr)'s notRun, in this
/// order); a caller that brings some measurements names the ones it has in their place.
inline constexpr const char* kNotRunDataCheck = "P2P data check (needs the GPUs; run without --snapshot)";
inline constexpr const char* kNotRunBandwidth = "bandwidth per pair (needs the GPUs)";
inline constexpr const char* kNotRunIpcCheck = "cross-process memory sharing (needs a GPU)";

/// One rule: reads the snapshot (and measurements when non-null) and appends findings.
struct DoctorRule {
  std::string name;    ///< shown as Finding::rule
  std::string family;  ///< p2p, nvlink, pcie, numa, driver, env, container, perf
  void (*apply)(const Snapshot&, const Measurements*, std::vector<Finding>&);  ///< the rule itself; pure
};

/// Every rule, in report order.
const std::vector<DoctorRule>& doctorRules();

/// The doctor's answer: a verdict, the findings and what could not be checked.
struct DoctorReport {
  std::string verdict;              ///< the one-line summary printed first
  std::vector<Finding> findings;    ///< worst first
  std::vector<std::string> notRun;  ///< checks left out here, with why
  Severity worst() const;           ///< the most severe finding's severity (kInfo when none)
};

/// `gpupeer doctor`'s exit code, which follows the worst finding: 1 when any finding is an
/// error, with or without a GPU (a driver older than the runtime shows none, and a script waiting
/// for 1 must still see it); else 3 when no GPU is visible; else 5 when the worst is a warning;
/// else 0 (healthy, or info findings only).
int doctorExitCode(const Snapshot& snapshot, const DoctorReport& report);

/// Applies every rule. `measured` is null offline (snapshot file), and the report says which
/// checks that leaves out.
DoctorReport diagnose(const Snapshot& snapshot, const Measurements* measured);

/// The GPU actions behind doctor's measured rules: the cross-process check on the first GPU
/// (runIpcCheck), the P2P data check on every ordered pair (8 MiB: every code path, 56 pairs
/// under 30 s) and the copy-engine bandwidth of each pair (64 MiB, 3 samples). What could not
/// run is listed in notRun with why.
Measurements measureForDoctor(const Snapshot& snapshot);

/// What a finding's KB entry tells the reader: whether it is loaded, and its best-rated
/// workaround's command ("" if none). Looked up in builtinKnowledgeBase().
struct KbAdvice {
  bool found = false;
  std::string firstWorkaround;
};
KbAdvice kbAdviceFor(const std::string& kbId);

/// What the report tells the reader to run for a finding: its own fix, else its KB entry's
/// first workaround; nothing for an info finding (nothing there is wrong enough to edit the
/// boot configuration or reboot for).
std::string firstThingToTry(const Finding& finding);

/// The report for people (`gpupeer doctor`): the verdict first, then each finding with its
/// evidence, KB id and first workaround, then what was checked (and measured, when `measured`
/// is given) in `seconds`.
std::string renderDoctorReport(const Snapshot& snapshot, const DoctorReport& report, const Measurements* measured,
                               double seconds);

/// The report as JSON text (`gpupeer doctor --json`): verdict, worst severity, findings with
/// their KB id and first workaround, notRun; with `measured`, the copy-engine bandwidths and
/// the data check's report.
std::string doctorReportToJson(const DoctorReport& report, const Measurements* measured);

/// Bandwidth below this share of the link's theoretical rate is flagged (copy engines reach
/// ~82% of raw NVLink4 and ~80-90% of PCIe on healthy machines, so 70% leaves headroom).
inline constexpr double kLowBandwidthShare = 0.70;
/// Two directions of one pair differing by more than this share are flagged as asymmetric.
inline constexpr double kAsymmetryShare = 0.15;

}  // namespace gpupeer
