#pragma once
// Reading a log as lines with bounded memory: a line longer than kKbMaxLinePiece comes back
// as several pieces with the same line number, so one huge line (a minified JSON dump, a
// progress bar without newlines) never makes the reader hold more than one piece.
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>

namespace gpupeer::kb_detail {

class LogLineReader {
 public:
  explicit LogLineReader(std::istream& in) : in_(in) {}

  /// The next line or piece of a line, without its '\n'; false at the end of input or on a
  /// read error (see failed()). `lineNumber` is 1-based; pieces of one line share it.
  bool next(std::string& piece, std::uint64_t& lineNumber);

  bool failed() const { return failed_; }
  std::uint64_t linesRead() const { return lines_; }
  std::uint64_t bytesRead() const { return bytes_; }

 private:
  bool fill();

  std::istream& in_;
  char buffer_[16 * 1024];
  std::size_t pos_ = 0;
  std::size_t len_ = 0;
  bool eof_ = false;
  bool failed_ = false;
  bool midLine_ = false;  // the last piece returned was cut, not ended by '\n'
  std::uint64_t lines_ = 0;
  std::uint64_t bytes_ = 0;
};

/// normaliseLogLine into `out` (cleared first), reusing its storage.
void normaliseLogLineInto(std::string_view line, std::string& out);

}  // namespace gpupeer::kb_detail
