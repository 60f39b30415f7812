// Pure parts of the P2P check: cases, device lists, and the report in text and JSON.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/bounded_input.hpp"
#include "gpupeer/peer_check.hpp"

namespace gpupeer {

const char* checkMethodName(CheckMethod m) {
  switch (m) {
    case CheckMethod::kCopyEngine: return "copy-engine";
    case CheckMethod::kKernelRead: return "kernel-read";
    case CheckMethod::kKernelWrite: return "kernel-write";
  }
  return "?";
}

const char* checkOutcomeName(CheckOutcome o) {
  switch (o) {
    case CheckOutcome::kPass: return "PASS";
    case CheckOutcome::kFail: return "FAIL";
    case CheckOutcome::kSkip: return "SKIP";
  }
  return "?";
}

std::vector<CheckCase> defaultCheckCases(std::size_t largeBytes) {
  return {
      {1, 0, 0},                // a single byte
      {4093, 1, 3},             // odd size, mutually misaligned: byte path
      {(1u << 20) + 7, 13, 5},  // odd size, offsets that differ by 8
      {largeBytes, 0, 0},       // aligned bulk
      {largeBytes - 5, 7, 7},   // same misalignment on both sides: head, vectors, tail
  };
}

int CheckReport::count(CheckOutcome o) const {
  int n = 0;
  for (const PairCheck& p : pairs)
    for (const MethodResult& m : p.methods) n += m.outcome == o;
  return n;
}

Result<std::vector<int>> parseDeviceList(const std::string& text, int deviceCount) {
  std::vector<int> out;
  std::set<int> seen;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    int value = -1;
    try {
      value = std::stoi(item, &used);
    } catch (...) {
      used = 0;
    }
    if (item.empty() || used != item.size())
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("device list '{}': '{}' is not a device number", text, item));
    if (value < 0)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("device {} does not exist: device numbers start at 0", value));
    if (value >= deviceCount)
      return GPUPEER_ERROR(
          ErrorCode::kInvalidArgument,
          fmt::format("device {} does not exist: {} GPU(s) visible (0 to {})", value, deviceCount, deviceCount - 1));
    if (!seen.insert(value).second)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("device {} is listed twice in '{}'", value, text));
    out.push_back(value);
  }
  if (out.empty()) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "empty device list");
  return out;
}

namespace {

std::string sizeText(std::size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} B", bytes);
}

}  // namespace

std::string renderCheckReport(const CheckReport& r) {
  std::string out =
      fmt::format("P2P check on {} GPU(s), {} ordered pair(s); each method moves {} cases:", r.devices.size(),
                  r.pairs.size(), r.cases.size());
  for (const CheckCase& c : r.cases) out += fmt::format(" {}@+{}/+{}", sizeText(c.bytes), c.srcOffset, c.dstOffset);
  out += "\n(size@+source offset/+destination offset; every byte and the guard bytes around it verified)\n\n";
  out += fmt::format("  {:<14}{:<14}{:<14}{:<14}\n", "pair", "copy-engine", "kernel-read", "kernel-write");
  std::string details;
  for (const PairCheck& p : r.pairs) {
    out += fmt::format("  {:<14}", fmt::format("GPU{}->GPU{}", p.src, p.dst));
    for (const MethodResult& m : p.methods) {
      std::string cell = checkOutcomeName(m.outcome);
      if (m.stagedThroughHost) cell += " (staged)";
      out += fmt::format("{:<14}", cell);
      if (!m.detail.empty())
        details += fmt::format("  GPU{}->GPU{} {} {}: {}\n", p.src, p.dst, checkMethodName(m.method),
                               checkOutcomeName(m.outcome), m.detail);
    }
    out += "\n";
  }
  if (!details.empty()) out += "\n" + details;
  int pass = r.count(CheckOutcome::kPass), fail = r.count(CheckOutcome::kFail), skip = r.count(CheckOutcome::kSkip);
  out += fmt::format("\nResult: {} passed, {} failed, {} skipped.\n", pass, fail, skip);
  return out;
}

std::string checkReportToJson(const CheckReport& r) {
  nlohmann::ordered_json root;
  root["devices"] = r.devices;
  root["cases"] = nlohmann::ordered_json::array();
  for (const CheckCase& c : r.cases)
    root["cases"].push_back({{"bytes", c.bytes}, {"srcOffset", c.srcOffset}, {"dstOffset", c.dstOffset}});
  root["pairs"] = nlohmann::ordered_json::array();
  for (const PairCheck& p : r.pairs) {
    nlohmann::ordered_json pj = {{"src", p.src}, {"dst", p.dst}, {"methods", nlohmann::ordered_json::array()}};
    for (const MethodResult& m : p.methods)
      pj["methods"].push_back({{"method", checkMethodName(m.method)},
                               {"outcome", checkOutcomeName(m.outcome)},
                               {"detail", m.detail},
                               {"stagedThroughHost", m.stagedThroughHost},
                               {"casesPassed", m.casesPassed}});
    root["pairs"].push_back(pj);
  }
  root["passed"] = r.count(CheckOutcome::kPass);
  root["failed"] = r.count(CheckOutcome::kFail);
  root["skipped"] = r.count(CheckOutcome::kSkip);
  return dumpJson(root, 2) + "\n";
}

}  // namespace gpupeer
