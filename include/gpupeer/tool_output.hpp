#pragma once
/// \file tool_output.hpp
/// Reading the outputs users paste beside error lines: `nvidia-smi topo -m` and `topo -p2p`
/// matrices, `nvidia-smi nvlink -s` / `dcgmi nvlink -s`, nccl-tests tables, the CUDA samples
/// simpleP2P and p2pBandwidthLatencyTest, and NCCL_DEBUG=INFO transport lines. Each tool has
/// its own parser behind one interface; `explain` feeds them the lines it streams to the KB
/// matcher, so a log of any size is read once, with bounded memory.

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpupeer/doctor.hpp"

namespace gpupeer {

/// What one parser understood from one tool's output.
struct ToolOutputFinding {
  std::string tool;                     ///< "nvidia-smi topo -m"
  Severity severity = Severity::kInfo;  ///< info: read and fine; warning: a problem; error: broken
  std::string title;                    ///< one line
  std::vector<std::string> details;     ///< one fact per line ("GPU0->GPU1: GNS, GPU not supported")
  std::vector<std::string> kbIds;       ///< KB entries that explain it, most relevant first
  std::uint64_t firstLine = 0;          ///< 1-based line where the output starts in the input
};

/// A reader of one tool's output. Lines arrive as the KB matcher sees them (normalised, at
/// most kKbMaxLinePiece long). Implementations do work linear in each line and keep bounded
/// state whatever the input (binary data, truncated tables, millions of lines).
class ToolOutputParser {
 public:
  virtual ~ToolOutputParser() = default;
  /// The tool whose output this reads ("nvidia-smi topo -m").
  virtual std::string_view tool() const = 0;
  /// Literals one of which every line that can start or matter to this tool's output holds
  /// ("Peer access from "); lines with none are not fed unless wantsEveryLine().
  virtual std::vector<std::string> triggers() const = 0;
  /// Characters that, as a line's first non-blank one, also make it needed ("#0123456789":
  /// nccl-tests headers and rows).
  virtual std::string_view lineStarts() const { return {}; }
  /// True while inside a table whose rows hold no trigger (numbers only): feed every line.
  /// Its answer may change only in feed() (the reader asks after each feed).
  virtual bool wantsEveryLine() const { return false; }
  virtual void feed(std::string_view line, std::uint64_t lineNumber) = 0;
  /// Called once after the last line; appends what was recognised (nothing if the tool's
  /// output was not in the input).
  virtual void finish(std::vector<ToolOutputFinding>& out) = 0;
};

/// One fresh instance of every parser, in report order.
std::vector<std::unique_ptr<ToolOutputParser>> makeToolOutputParsers();

/// Feeds each parser the lines it needs: those holding one of its triggers or starting with one
/// of its lineStarts(), and every line while it is inside a table. Not thread-safe.
class ToolOutputReader {
 public:
  ToolOutputReader();
  ~ToolOutputReader();
  void feed(std::string_view line, std::uint64_t lineNumber);
  /// feed() when the caller already matched triggerPatterns() against the line (explain does,
  /// in the KB matcher's pass): `triggered` holds the indices of those that matched.
  void feed(std::string_view line, std::uint64_t lineNumber, std::span<const int> triggered);
  /// The parsers' triggers as RE2 patterns (quoted literals), in a fixed order.
  static std::vector<std::string> triggerPatterns();
  /// The findings of every parser, worst first, identical outputs merged; the reader is spent.
  std::vector<ToolOutputFinding> finish();

 private:
  struct Triggers;
  std::vector<std::unique_ptr<ToolOutputParser>> parsers_;
  std::unique_ptr<Triggers> triggers_;
};

/// Splits `text` into lines, normalises them as the KB matcher does and reads them.
std::vector<ToolOutputFinding> readToolOutputs(std::string_view text);

/// Text for `explain`: one block per finding, worst first as given.
std::string renderToolOutputsText(const std::vector<ToolOutputFinding>& findings);
/// JSON array for `explain --json`: tool, severity, title, details, kbIds, line.
nlohmann::ordered_json toolOutputsToJson(const std::vector<ToolOutputFinding>& findings);

}  // namespace gpupeer
