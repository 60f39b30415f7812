// Bench results as matrices and lists (text), JSON lines and CSV.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/bounded_input.hpp"
#include "gpupeer/bench.hpp"

namespace gpupeer {
namespace {

std::string share(const BenchCell& c) {
  if (c.theoreticalGBps <= 0) return "";
  double pct = 100 * c.value.median / c.theoreticalGBps;
  return fmt::format(" ({:.0f}%{})", pct, pct < 100 * kBenchLowShare ? " LOW" : "");
}

std::string valueText(const BenchResult& r, const BenchCell& c) {
  if (!c.note.empty() && c.value.samples == 0) return c.note.rfind("waived", 0) == 0 ? "waived" : "FAIL";
  if (r.kind == BenchKind::kLatency) return fmt::format("{:.2f}", c.value.median);
  return fmt::format("{:.1f}{}", c.value.median, share(c));
}

const BenchCell* cellAt(const BenchResult& r, int row, int col) {
  for (const BenchCell& c : r.cells)
    if (c.row == row && c.col == col) return &c;
  return nullptr;
}

bool isMatrix(const BenchResult& r) {
  for (const BenchCell& c : r.cells)
    if (c.row < 0 || c.col < 0) return false;
  return !r.cells.empty();
}

}  // namespace

std::string renderBenchText(const BenchResult& r, int gpuCount) {
  std::string unit = r.kind == BenchKind::kLatency ? "us" : "GB/s";
  std::string out = fmt::format("{}: {} [{}, median", r.key, r.description, unit);
  int samples = r.cells.empty() ? 0 : r.cells[0].value.samples;
  out += fmt::format(" of {} samples]\n", samples);
  if (!r.waived.empty()) return out + "  WAIVED: " + r.waived + "\n";
  if (!r.error.empty()) return out + "  ERROR: " + r.error + "\n";
  if (isMatrix(r) && r.key != "latency_pingpong") {
    // Rows name the source, except for the pointer chase, whose row is the memory read from.
    const char* rowName = r.key == "latency_chase" ? "memory" : "src";
    out += fmt::format("  {:<10}", rowName);
    for (int col = 0; col < gpuCount; ++col) out += fmt::format("{:>20}", fmt::format("dst GPU{}", col));
    out += "\n";
    for (int row = 0; row < gpuCount; ++row) {
      out += fmt::format("  {:<10}", fmt::format("GPU{}", row));
      for (int col = 0; col < gpuCount; ++col) {
        const BenchCell* c = cellAt(r, row, col);
        out += fmt::format("{:>20}", row == col ? "-" : c ? valueText(r, *c) : "");
      }
      out += "\n";
    }
  } else {
    for (const BenchCell& c : r.cells) out += fmt::format("  {:<16}{:>20}\n", c.label, valueText(r, c));
  }
  for (const BenchCell& c : r.cells) {
    if (c.value.samples > 0)
      out += fmt::format("    {:<14} median {:.2f}  min {:.2f}  max {:.2f}{}\n", c.label, c.value.median, c.value.min,
                         c.value.max, c.verified ? "  data verified" : "");
    if (!c.note.empty() && c.note.rfind("waived", 0) != 0) out += fmt::format("    {}: {}\n", c.label, c.note);
  }
  if (r.kind == BenchKind::kBandwidth) out += fmt::format("  SUM {} {:.1f} {}\n", r.key, r.sum(), unit);
  return out;
}

std::string renderSweepText(const BenchResult& r) {
  std::string out = fmt::format("{}: {}\n", r.key, r.description);
  if (!r.waived.empty()) return out + "  WAIVED: " + r.waived + "\n";
  if (!r.error.empty()) return out + "  ERROR: " + r.error + "\n";
  double largest = r.cells.empty() ? 0 : r.cells.back().value.median;
  out += fmt::format("  {:>12} {:>12} {:>12} {:>10} {:>12}\n", "size", "time (us)", "GB/s", "% of max", "% of link");
  for (const BenchCell& c : r.cells) {
    if (c.value.samples == 0) {
      out += fmt::format("  {:>12} {}\n", c.label, c.note);
      continue;
    }
    double us = c.bytes / (c.value.median * 1e9) * 1e6;
    out += fmt::format("  {:>12} {:>12.2f} {:>12.2f} {:>9.0f}% {:>11}\n", c.label, us, c.value.median,
                       largest > 0 ? 100 * c.value.median / largest : 0,
                       c.theoreticalGBps > 0 ? fmt::format("{:.0f}%", 100 * c.value.median / c.theoreticalGBps) : "-");
  }
  return out;
}

std::string renderSweepsSideBySide(const std::vector<BenchResult>& sweeps) {
  std::string out = "size vs GB/s by path:\n";
  for (const BenchResult& r : sweeps)
    out += fmt::format("  {}: {}\n", r.key, !r.waived.empty() ? "WAIVED: " + r.waived : r.description);
  out += fmt::format("  {:>12}", "size");
  for (const BenchResult& r : sweeps) out += fmt::format(" {:>22}", r.key.substr(0, 22));
  out += "\n";
  size_t rows = 0;
  for (const BenchResult& r : sweeps) rows = std::max(rows, r.cells.size());
  for (size_t i = 0; i < rows; ++i) {
    std::string label;
    for (const BenchResult& r : sweeps)
      if (i < r.cells.size()) label = r.cells[i].label;
    out += fmt::format("  {:>12}", label);
    for (const BenchResult& r : sweeps) {
      if (i >= r.cells.size() || r.cells[i].value.samples == 0) {
        out += fmt::format(" {:>22}", "-");
        continue;
      }
      const BenchCell& c = r.cells[i];
      out += fmt::format(" {:>22}", fmt::format("{:.2f}", c.value.median));
    }
    out += "\n";
  }
  return out;
}

std::string benchGpusLabel(const Snapshot& s) {
  return s.gpus.empty() ? "" : fmt::format("{}x {}", s.gpus.size(), s.gpus[0].name);
}

std::string benchToJsonLine(const BenchResult& r, const Snapshot& s) {
  nlohmann::ordered_json j;
  j["testcase"] = r.key;
  j["unit"] = r.kind == BenchKind::kLatency ? "us" : "GB/s";
  j["date"] = s.capturedAt;
  j["host"] = s.hostname;
  j["gpus"] = benchGpusLabel(s);
  j["driver"] = s.driverVersion.valueOr("unknown");
  if (!r.waived.empty()) j["waived"] = r.waived;
  if (!r.error.empty()) j["error"] = r.error;
  j["cells"] = nlohmann::ordered_json::array();
  for (const BenchCell& c : r.cells) {
    nlohmann::ordered_json cj = {
        {"label", c.label},         {"src", c.row},       {"dst", c.col},       {"bytes", c.bytes},
        {"median", c.value.median}, {"min", c.value.min}, {"max", c.value.max}, {"samples", c.value.samples},
        {"verified", c.verified}};
    if (c.theoreticalGBps > 0) cj["percentOfLink"] = 100 * c.value.median / c.theoreticalGBps;
    if (!c.note.empty()) cj["note"] = c.note;
    j["cells"].push_back(cj);
  }
  if (r.kind == BenchKind::kBandwidth) j["sum"] = r.sum();
  return dumpJson(j, -1) + "\n";
}

std::string benchToCsv(const BenchResult& r, bool header) {
  std::string out = header ? "testcase,label,src,dst,bytes,median,min,max,samples,percent_of_link,verified,note\n" : "";
  for (const BenchCell& c : r.cells) {
    std::string note = c.note;
    for (char& ch : note)
      if (ch == ',' || ch == '\n') ch = ';';
    out += fmt::format("{},{},{},{},{},{:.3f},{:.3f},{:.3f},{},{},{},{}\n", r.key, c.label, c.row, c.col, c.bytes,
                       c.value.median, c.value.min, c.value.max, c.value.samples,
                       c.theoreticalGBps > 0 ? fmt::format("{:.1f}", 100 * c.value.median / c.theoreticalGBps) : "",
                       c.verified ? 1 : 0, note);
  }
  if (!r.waived.empty()) out += fmt::format("{},,,,,,,,,,,waived: {}\n", r.key, r.waived);
  return out;
}

}  // namespace gpupeer
