// Log lines as the KB matcher sees them: bounded pieces, without terminal escape sequences.
#include "log_lines.hpp"

#include "gpupeer/kb_matcher.hpp"

namespace gpupeer {
namespace kb_detail {

LogLineReader::LogLineReader(std::istream& in, std::size_t pieceBytes, std::size_t overlapBytes)
    : in_(in), pieceBytes_(pieceBytes ? pieceBytes : kKbMaxLinePiece), overlapBytes_(overlapBytes) {
  // At least one new byte per piece, so every piece moves the reader on.
  if (overlapBytes_ >= pieceBytes_) overlapBytes_ = pieceBytes_ - 1;
}

bool LogLineReader::fill() {
  if (eof_ || failed_) return false;
  in_.read(buffer_, sizeof buffer_);
  len_ = static_cast<std::size_t>(in_.gcount());
  pos_ = 0;
  bytes_ += len_;
  if (in_.bad()) failed_ = true;
  if (!in_) eof_ = true;  // eof (or failure): what was read is still used
  return len_ > 0;
}

bool LogLineReader::next(std::string& piece, std::uint64_t& lineNumber) {
  piece.clear();
  repeated_ = 0;
  bool any = false;  // read at least one new byte (or the '\n') of a line
  for (;;) {
    if (pos_ == len_ && !fill()) break;
    // A line of exactly N pieces ends with '\n' right after a cut: that '\n' ends the line
    // already counted, it does not start an empty one.
    if (midLine_ && !any && buffer_[pos_] == '\n') {
      ++pos_;
      midLine_ = false;
      carry_.clear();
      continue;
    }
    if (!any && midLine_) {  // a continuation: start with the end of the piece before
      piece = carry_;
      repeated_ = carry_.size();
    }
    any = true;
    const char* start = buffer_ + pos_;
    std::size_t avail = len_ - pos_;
    std::size_t room = pieceBytes_ - piece.size();
    std::string_view chunk(start, avail < room ? avail : room);
    std::size_t nl = chunk.find('\n');
    if (nl != std::string_view::npos) {
      piece.append(start, nl);
      pos_ += nl + 1;
      if (!midLine_) ++lines_;
      lineNumber = lines_;
      midLine_ = false;
      carry_.clear();
      return true;
    }
    piece.append(chunk);
    pos_ += chunk.size();
    if (piece.size() == pieceBytes_) {
      if (!midLine_) ++lines_;
      lineNumber = lines_;
      midLine_ = true;
      carry_.assign(piece, piece.size() - overlapBytes_, overlapBytes_);
      return true;
    }
  }
  if (!any) return false;
  // Last line without a trailing '\n'.
  if (!midLine_) ++lines_;
  lineNumber = lines_;
  midLine_ = false;
  carry_.clear();
  return true;
}

void normaliseLogLineInto(std::string_view s, std::string& out) {
  out.clear();
  const std::size_t n = s.size();
  auto in = [&](std::size_t j, unsigned char lo, unsigned char hi) {
    return j < n && static_cast<unsigned char>(s[j]) >= lo && static_cast<unsigned char>(s[j]) <= hi;
  };
  std::size_t i = 0;
  while (i < n) {
    std::size_t esc = s.find('\x1b', i);
    if (esc == std::string_view::npos) esc = n;
    out.append(s.substr(i, esc - i));
    if (esc == n) break;
    std::size_t j = esc + 1;
    if (j < n && s[j] == '[') {  // CSI: parameters, intermediates, one final byte ("\x1b[1;31m")
      ++j;
      while (in(j, 0x30, 0x3f)) ++j;
      while (in(j, 0x20, 0x2f)) ++j;
      if (in(j, 0x40, 0x7e)) ++j;
    } else if (j < n && (s[j] == ']' || s[j] == 'P' || s[j] == 'X' || s[j] == '^' || s[j] == '_')) {
      // OSC, DCS, SOS, PM, APC: a string ended by BEL or ST ("\x1b\\"), e.g. hyperlinks.
      ++j;
      while (j < n && s[j] != '\x07' && !(s[j] == '\x1b' && j + 1 < n && s[j + 1] == '\\')) ++j;
      if (j < n) j += s[j] == '\x07' ? 1 : 2;
    } else if (in(j, 0x20, 0x2f)) {  // nF: intermediates then a final byte ("\x1b(B")
      while (in(j, 0x20, 0x2f)) ++j;
      if (j < n) ++j;
    } else if (in(j, 0x30, 0x7e)) {  // two-byte escape ("\x1b7", "\x1bM")
      ++j;
    }
    i = j;
  }
  while (!out.empty() && out.back() == '\r') out.pop_back();
}

}  // namespace kb_detail

std::string normaliseLogLine(std::string_view line) {
  std::string out;
  kb_detail::normaliseLogLineInto(line, out);
  return out;
}

}  // namespace gpupeer
