// The pure parts of bench: statistics and sizes.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "gpupeer/bench.hpp"

namespace gpupeer {

Stats summarize(std::vector<double> values) {
  Stats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  s.min = values.front();
  s.max = values.back();
  s.samples = static_cast<int>(n);
  return s;
}

double togetherGbps(std::size_t bytesEach, const std::vector<double>& seconds) {
  if (seconds.empty()) return 0;
  const double last = *std::max_element(seconds.begin(), seconds.end());
  const double shortest = *std::min_element(seconds.begin(), seconds.end());
  if (shortest <= 0) return 0;
  return static_cast<double>(bytesEach) * seconds.size() / last / 1e9;
}

Result<std::size_t> parseByteSize(const std::string& text) {
  size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == 0)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("size '{}' does not start with a number", text));
  std::string unit = text.substr(pos);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
  int shift = 0;
  if (unit.empty() || unit == "B")
    shift = 0;
  else if (unit == "K")
    shift = 10;
  else if (unit == "M")
    shift = 20;
  else if (unit == "G")
    shift = 30;
  else if (unit == "T")
    shift = 40;
  else
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("size '{}': unknown unit (use K, M, G)", text));
  if (pos > 15) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("size '{}' is too large", text));
  std::size_t value = std::stoull(text.substr(0, pos));
  if (value > (std::size_t{1} << (62 - shift)))
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("size '{}' is too large", text));
  return value << shift;
}

Result<std::vector<std::size_t>> sweepSizes(std::size_t begin, std::size_t end, double factor) {
  if (begin == 0) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "sweep start size must be at least 1 byte");
  if (end < begin)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("sweep end {} is below its start {}", end, begin));
  if (!(factor > 1.0)) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "sweep factor must be greater than 1");
  std::vector<std::size_t> out;
  for (double size = static_cast<double>(begin); size <= static_cast<double>(end) * (1 + 1e-9); size *= factor) {
    out.push_back(static_cast<std::size_t>(std::llround(size)));
    if (out.size() > 256)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "sweep has more than 256 sizes; use a larger factor");
  }
  return out;
}

std::string formatBytes(std::size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  std::size_t v = bytes;
  while (u < 4 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{} {}", v, units[u]);
}

double BenchResult::sum() const {
  double total = 0;
  for (const BenchCell& c : cells) total += c.value.median;
  return total;
}

}  // namespace gpupeer
