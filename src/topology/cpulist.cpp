#include "gpupeer/cpulist.hpp"

#include <sstream>

namespace gpupeer {

std::optional<std::set<int>> parseCpuList(const std::string& text) {
  std::set<int> cpus;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    while (!item.empty() && (item.back() == '\n' || item.back() == ' ')) item.pop_back();
    if (item.empty()) continue;
    int lo = 0, hi = 0;
    char dash = 0;
    std::istringstream range(item);
    if (!(range >> lo)) return std::nullopt;
    if (range >> dash) {
      if (dash != '-' || !(range >> hi) || hi < lo) return std::nullopt;
    } else {
      hi = lo;
    }
    if (lo < 0 || hi - lo > 65536) return std::nullopt;
    for (int c = lo; c <= hi; ++c) cpus.insert(c);
  }
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
