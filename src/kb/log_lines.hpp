#pragma once
// Reading a log as lines with bounded memory: a line longer than one piece comes back as
// several pieces with the same line number, so one huge line (a minified JSON dump, a progress
// bar without newlines) never makes the reader hold more than one piece. Each piece after the
// first of a line starts with the last `overlap` bytes of the one before, so a message of up to
// that length which straddles a cut is still seen whole in one piece.
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>

namespace gpupeer::kb_detail {

/// Bytes a continuation piece repeats from the piece before it: the longest message that is
/// still matched where it straddles a cut of a long line.
inline constexpr std::size_t kKbPieceOverlap = 4 * 1024;

class LogLineReader {
 public:
  /// Pieces of at most `pieceBytes`, repeating `overlapBytes` (< pieceBytes) at each cut; the
  /// defaults are the matcher's (kKbMaxLinePiece, kKbPieceOverlap).
  explicit LogLineReader(std::istream& in, std::size_t pieceBytes = 0, std::size_t overlapBytes = kKbPieceOverlap);

  /// The next line or piece of a line, without its '\n'; false at the end of input or on a
  /// read error (see failed()). `lineNumber` is 1-based; pieces of one line share it.
  bool next(std::string& piece, std::uint64_t& lineNumber);

  /// How many leading bytes of the last piece repeat the end of the piece before it (0 for
  /// the first piece of a line).
  std::size_t repeated() const { return repeated_; }
  bool failed() const { return failed_; }
  std::uint64_t linesRead() const { return lines_; }
  std::uint64_t bytesRead() const { return bytes_; }

 private:
  bool fill();

  std::istream& in_;
  std::size_t pieceBytes_;
  std::size_t overlapBytes_;
  char buffer_[64 * 1024];  // a quarter of the read calls 16 KiB took, on a large log
  std::size_t pos_ = 0;
  std::size_t len_ = 0;
  bool eof_ = false;
  bool failed_ = false;
  bool midLine_ = false;  // the last piece returned was cut, not ended by '\n'
  std::string carry_;     // the end of the last cut piece, which starts the next one
  std::size_t repeated_ = 0;
  std::uint64_t lines_ = 0;
  std::uint64_t bytes_ = 0;
};

/// normaliseLogLine into `out` (cleared first), reusing its storage.
void normaliseLogLineInto(std::string_view line, std::string& out);

}  // namespace gpupeer::kb_detail
