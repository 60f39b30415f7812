#pragma once
// Linux cpulist text ("0-3,8,10-11"), as sysfs local_cpulist and taskset print it: the probe
// reads GPUs' and the process's CPUs with it, the doctor compares them. Pure; any thread.
// Parsing is linear in the text (after sorting its ranges) and bounded, whatever the text: CPU
// numbers up to kMaxCpuNumber, at most kMaxCpuListRanges ranges. Internal.

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gpupeer {

/// Largest CPU number read (Linux's NR_CPUS is at most 8192).
inline constexpr int kMaxCpuNumber = 65535;
/// Most comma-separated items read (every other CPU of a 4096-CPU machine is 2048).
inline constexpr std::size_t kMaxCpuListRanges = 4096;

/// Inclusive CPU ranges, sorted and merged: {{0, 3}, {8, 8}}.
using CpuRanges = std::vector<std::pair<int, int>>;

/// nullopt on malformed text (the caller reports it), a CPU number past kMaxCpuNumber or more
/// than kMaxCpuListRanges items; empty text is the empty list.
std::optional<CpuRanges> parseCpuRanges(const std::string& text);
/// Whether two lists share a CPU, in time linear in their ranges.
bool cpuRangesOverlap(const CpuRanges& a, const CpuRanges& b);
/// parseCpuRanges as a set of CPUs (at most kMaxCpuNumber + 1 of them).
std::optional<std::set<int>> parseCpuList(const std::string& text);
/// The set as cpulist text, runs collapsed ("0-3,8"); "" for the empty set.
std::string formatCpuList(const std::set<int>& cpus);

}  // namespace gpupeer
