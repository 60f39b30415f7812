// Finding nvidia-smi's device matrices in pasted text.
#include "tool_output/gpu_matrix.hpp"

#include <algorithm>

#include "tool_output/fields.hpp"

namespace gpupeer::tool_output {
namespace {

// A device label of a header: letters, digits and '_', ending in a digit ("GPU0", "NIC3",
// "mlx5_0"). "CPU", "Affinity" and "NUMA" end the list of devices.
bool isDeviceLabel(std::string_view f) {
  if (f.empty() || f.size() > 24 || !(f.back() >= '0' && f.back() <= '9')) return false;
  if (!((f[0] >= 'A' && f[0] <= 'Z') || (f[0] >= 'a' && f[0] <= 'z'))) return false;
  return std::all_of(f.begin(), f.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::string GpuMatrix::cell(int a, int b) const {
  auto row = std::find(gpuOfRow.begin(), gpuOfRow.end(), a);
  auto col = std::find(gpuOfColumn.begin(), gpuOfColumn.end(), b);
  if (row == gpuOfRow.end() || col == gpuOfColumn.end()) return "";
  const auto& cells_ = cells[row - gpuOfRow.begin()];
  std::size_t c = col - gpuOfColumn.begin();
  return c < cells_.size() ? cells_[c] : "";
}

std::vector<int> GpuMatrix::gpus() const {
  std::vector<int> out;
  for (int g : gpuOfRow)
    if (g >= 0) out.push_back(g);
  std::sort(out.begin(), out.end());
  return out;
}

bool GpuMatrix::gpuCellsAre(const std::function<bool(const std::string&)>& isCode) const {
  int known = 0;
  std::vector<int> all = gpus();
  for (int a : all)
    for (int b : all) {
      if (a == b) continue;
      std::string c = cell(a, b);
      if (c.empty()) continue;
      if (!isCode(c)) return false;
      ++known;
    }
  return known > 0;
}

void GpuMatrixReader::feed(std::string_view line, std::uint64_t lineNumber) {
  // Most lines of a log are neither a header nor a row: skip them without splitting.
  if (!open_ && firstField(line) != "GPU0") return;  // not a header (below: f[0] == "GPU0")
  std::vector<std::string_view>& f = fields_;        // reused: no allocation per line
  splitFieldsInto(line, f);
  if (open_) {
    // A row: its label is one of the header's columns, followed by at least one cell per
    // column (trailing CPU/NUMA affinity fields are ignored).
    auto it = f.empty() ? current_.columns.end()
                        : std::find(current_.columns.begin(), current_.columns.end(), std::string(f[0]));
    if (it != current_.columns.end() && f.size() >= current_.columns.size() + 1) {
      if (static_cast<int>(current_.cells.size()) >= kMaxDevices) {
        current_.cut = true;
        return;
      }
      std::vector<std::string> row;
      for (std::size_t c = 0; c < current_.columns.size(); ++c) row.emplace_back(f[c + 1]);
      current_.cells.push_back(std::move(row));
      current_.gpuOfRow.push_back(parseIndexed(f[0], "GPU").value_or(-1));
      return;
    }
    close();  // anything else ends the table (the blank line before "Legend:")
  }
  // A header: two or more device labels first, GPU0 among them.
  std::size_t n = 0;
  while (n < f.size() && isDeviceLabel(f[n])) ++n;
  if (n < 2 || f[0] != "GPU0") return;
  current_ = GpuMatrix{};
  current_.firstLine = lineNumber;
  for (std::size_t c = 0; c < n && c < static_cast<std::size_t>(kMaxDevices); ++c) {
    current_.columns.emplace_back(f[c]);
    current_.gpuOfColumn.push_back(parseIndexed(f[c], "GPU").value_or(-1));
  }
  current_.cut = n > static_cast<std::size_t>(kMaxDevices);
  open_ = true;
}

void GpuMatrixReader::finish() {
  if (open_) close();
}

void GpuMatrixReader::close() {
  open_ = false;
  if (current_.cells.empty()) return;
  // Fewer GPU rows than GPU columns: the paste was cut.
  int gpuColumns = static_cast<int>(
      std::count_if(current_.gpuOfColumn.begin(), current_.gpuOfColumn.end(), [](int g) { return g >= 0; }));
  if (static_cast<int>(current_.gpus().size()) < gpuColumns) current_.cut = true;
  sink_(current_);
  current_ = GpuMatrix{};
}

void GpuMatrixParser::take(const GpuMatrix& m) {
  if (found_.size() >= 8) return;
  ToolOutputFinding f{std::string(tool()), Severity::kInfo, "", {}, {}, m.firstLine};
  if (!interpret(m, f)) return;
  if (m.cut) f.details.push_back("the table looks cut: some GPU rows are missing");
  found_.push_back(std::move(f));
}

void GpuMatrixParser::finish(std::vector<ToolOutputFinding>& out) {
  reader_.finish();
  for (ToolOutputFinding& f : found_) out.push_back(std::move(f));
  found_.clear();
}

}  // namespace gpupeer::tool_output
