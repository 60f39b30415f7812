#pragma once
// The square tables nvidia-smi prints for `topo -m` and `topo -p2p r|w|n|a|p`: a header of
// device labels (GPU0 GPU1 ... NIC0 ... then "CPU Affinity" and the like), one row per
// device, one cell per column. This reader finds such tables in a stream of lines and hands
// each complete one to its owner; the owners decide what the cells mean.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpupeer/tool_output.hpp"

namespace gpupeer::tool_output {

struct GpuMatrix {
  std::uint64_t firstLine = 0;       ///< the header line
  std::vector<std::string> columns;  ///< device labels of the header: "GPU0", "NIC1", "mlx5_0"
  std::vector<int> gpuOfColumn;      ///< GPU index of each column, -1 for other devices
  /// cells[r][c]: row r's cell under columns[c]; rows in table order.
  std::vector<std::vector<std::string>> cells;
  std::vector<int> gpuOfRow;  ///< GPU index of each row, -1 for other devices
  bool cut = false;           ///< more devices than kMaxDevices, or rows missing

  /// The cell between GPU a (row) and GPU b (column); "" when absent.
  std::string cell(int a, int b) const;
  /// GPU indices that have a row, ascending.
  std::vector<int> gpus() const;
  /// Whether every non-empty cell between two different GPUs satisfies `isCode`, and at least
  /// one does: how a parser tells its table from another tool's table of the same shape.
  bool gpuCellsAre(const std::function<bool(const std::string&)>& isCode) const;
};

class GpuMatrixReader {
 public:
  using Sink = std::function<void(const GpuMatrix&)>;
  explicit GpuMatrixReader(Sink sink) : sink_(std::move(sink)) {}

  void feed(std::string_view line, std::uint64_t lineNumber);
  /// Hands over a table still open at the end of the input (a truncated paste).
  void finish();
  /// Inside a table: rows follow.
  bool open() const { return open_; }

 private:
  void close();

  Sink sink_;
  GpuMatrix current_;
  std::vector<std::string_view> fields_;  // feed()'s split of the current line
  bool open_ = false;
};

/// A parser of one kind of nvidia-smi matrix: reads the tables and asks interpret() what each
/// means; tables that are not its kind give no finding. Keeps at most 8 findings.
class GpuMatrixParser : public ToolOutputParser {
 public:
  GpuMatrixParser() : reader_([this](const GpuMatrix& m) { take(m); }) {}
  std::vector<std::string> triggers() const override { return {"GPU0"}; }
  bool wantsEveryLine() const override { return reader_.open(); }
  void feed(std::string_view line, std::uint64_t n) override { reader_.feed(line, n); }
  void finish(std::vector<ToolOutputFinding>& out) override;

 protected:
  /// The finding for a complete table, or false when it is another tool's table.
  virtual bool interpret(const GpuMatrix& m, ToolOutputFinding& f) const = 0;

 private:
  void take(const GpuMatrix& m);

  GpuMatrixReader reader_;
  std::vector<ToolOutputFinding> found_;
};

}  // namespace gpupeer::tool_output
