// Text helpers shared by the tool-output parsers.
#include "tool_output/fields.hpp"

#include <fmt/format.h>

#include <cstdlib>

namespace gpupeer::tool_output {

std::vector<std::string_view> splitFields(std::string_view line) {
  std::vector<std::string_view> out;
  splitFieldsInto(line, out);
  return out;
}

void splitFieldsInto(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < line.size() && out.size() < kMaxFields) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
}

std::string_view firstField(std::string_view line) {
  std::size_t start = 0;
  while (start < line.size() && (line[start] == ' ' || line[start] == '\t')) ++start;
  std::size_t end = start;
  while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
  return line.substr(start, end - start);
}

std::optional<long long> parseCount(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  long long v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::optional<double> parseNumber(std::string_view text) {
  if (text.empty() || text.size() > 32) return std::nullopt;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return std::nullopt;
  std::string copy(text);  // strtod needs a terminated string
  char* end = nullptr;
  double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
  return v;
}

std::optional<int> parseIndexed(std::string_view field, std::string_view prefix) {
  if (!startsWith(field, prefix) || field.size() == prefix.size() || field.size() > prefix.size() + 6)
    return std::nullopt;
  auto n = parseCount(field.substr(prefix.size()));
  if (!n) return std::nullopt;
  return static_cast<int>(*n);
}

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string joinLimited(const std::vector<std::string>& items, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < max; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > max) out += fmt::format(" and {} more", items.size() - max);
  return out;
}

std::string sizeText(long long bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = static_cast<double>(bytes);
  while (v >= 1024 && u < 4 && static_cast<long long>(v) % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:g} {}", v, kUnits[u]);
}

}  // namespace gpupeer::tool_output
