#include "core/cpulist.hpp"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace gpupeer {
namespace {

// A CPU number from the front of `item`: digits only, at most kMaxCpuNumber.
bool takeCpu(std::string_view& item, int& cpu) {
  if (item.empty() || item.front() < '0' || item.front() > '9') return false;
  auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), cpu);
  if (error != std::errc() || cpu > kMaxCpuNumber) return false;
  item.remove_prefix(static_cast<std::size_t>(end - item.data()));
  return true;
}

}  // namespace

std::optional<CpuRanges> parseCpuRanges(const std::string& text) {
  CpuRanges ranges;
  std::string_view rest(text);
  while (!rest.empty()) {
    std::size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!item.empty() && (item.back() == '\n' || item.back() == ' ')) item.remove_suffix(1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    if (item.empty()) continue;
    if (ranges.size() == kMaxCpuListRanges) return std::nullopt;
    int lo = 0, hi = 0;
    if (!takeCpu(item, lo)) return std::nullopt;
    hi = lo;
    if (!item.empty()) {
      if (item.front() != '-') return std::nullopt;
      item.remove_prefix(1);
      if (!takeCpu(item, hi) || !item.empty() || hi < lo) return std::nullopt;
    }
    ranges.emplace_back(lo, hi);
  }
  std::sort(ranges.begin(), ranges.end());
  CpuRanges merged;
  for (const auto& r : ranges) {
    if (!merged.empty() && r.first <= merged.back().second + 1)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  }
  return merged;
}

bool cpuRangesOverlap(const CpuRanges& a, const CpuRanges& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i].second < b[j].first)
      ++i;
    else if (b[j].second < a[i].first)
      ++j;
    else
      return true;
  }
  return false;
}

std::optional<std::set<int>> parseCpuList(const std::string& text) {
  std::optional<CpuRanges> ranges = parseCpuRanges(text);
  if (!ranges) return std::nullopt;
  std::set<int> cpus;
  for (const auto& [lo, hi] : *ranges)
    for (int c = lo; c <= hi; ++c) cpus.insert(cpus.end(), c);  // merged: at most kMaxCpuNumber + 1 in all
  return cpus;
}

std::string formatCpuList(const std::set<int>& cpus) {
  std::string out;
  for (auto it = cpus.begin(); it != cpus.end();) {
    int lo = *it, hi = lo;
    for (++it; it != cpus.end() && *it == hi + 1; ++it) hi = *it;
    if (!out.empty()) out += ',';
    out += lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
  }
  return out;
}

}  // namespace gpupeer
