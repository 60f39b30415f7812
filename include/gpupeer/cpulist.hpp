#pragma once
/// \file cpulist.hpp
/// Linux cpulist text ("0-3,8,10-11"), as sysfs local_cpulist and taskset print it. Pure; any
/// thread.

#include <optional>
#include <set>
#include <string>

namespace gpupeer {

/// nullopt on malformed text (the caller reports it); empty text is the empty set.
std::optional<std::set<int>> parseCpuList(const std::string& text);
/// The set as cpulist text, runs collapsed ("0-3,8"); "" for the empty set.
std::string formatCpuList(const std::set<int>& cpus);

}  // namespace gpupeer
