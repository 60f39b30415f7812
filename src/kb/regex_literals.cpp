// Required literals of an RE2 pattern, read by a small recursive-descent parser. It only has
// to be right in one direction: a literal it reports must be in every match. Whatever it does
// not follow makes the pattern "no literal" (run on every line), never a wrong literal.
#include "regex_literals.hpp"

#include <cctype>
#include <cstdint>

namespace gpupeer::kb_detail {
namespace {

using Cover = std::optional<std::vector<std::string>>;

char lowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Bytes of the UTF-8 character that starts with `lead` (1 for ASCII and stray bytes).
std::size_t utf8Length(unsigned char lead) {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}

// What the reader knows of a part of a pattern.
struct Part {
  Cover cover;                        // every match contains one of these
  std::vector<std::string> prefixes;  // every match starts with one of these ("": nothing known)
  bool exact = false;                 // every match is one of `prefixes`
};

// At most this many strings in a set built by concatenation (each alternative of a group
// times each string before it), so the sets stay small.
constexpr std::size_t kMaxProduct = 16;

std::size_t shortest(const std::vector<std::string>& v) {
  std::size_t m = v.empty() ? 0 : SIZE_MAX;
  for (const std::string& s : v) m = std::min(m, s.size());
  return m;
}

// How rare a set of literals is in text, roughly: the letters and digits of its poorest
// literal (" to " is as common as "to", "] -> " commoner than any word).
std::size_t rarity(const std::vector<std::string>& v) {
  std::size_t m = v.empty() ? 0 : SIZE_MAX;
  for (const std::string& s : v) {
    std::size_t n = 0;
    for (char c : s) n += std::isalnum(static_cast<unsigned char>(c)) ? 1 : 0;
    m = std::min(m, n);
  }
  return m;
}

std::optional<std::vector<std::string>> product(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() * b.size() > kMaxProduct) return std::nullopt;
  std::vector<std::string> out;
  for (const std::string& x : a)
    for (const std::string& y : b) out.push_back(x + y);
  return out;
}

class LiteralReader {
 public:
  explicit LiteralReader(std::string_view p) : p_(p) {}

  std::optional<std::vector<RequiredLiterals>> read() {
    bool ci = false;
    alternation(ci);
    if (bad_ || i_ != p_.size()) return std::nullopt;
    for (const RequiredLiterals& b : branches_)
      if (b.anyOf.empty()) return std::nullopt;  // a branch that needs no literal
    return std::move(branches_);
  }

 private:
  bool at(char c) const { return i_ < p_.size() && p_[i_] == c; }

  // Every branch must hold a literal for the alternation to have one: the union of theirs.
  Part alternation(bool& ci) {
    Part out{std::vector<std::string>{}, {}, true};
    ++depth_;
    for (;;) {
      Part branch = sequence(ci);
      if (depth_ == 1) {  // a branch of the whole pattern: what it needs, on its own
        branches_.push_back({branch.cover.value_or(std::vector<std::string>{}), std::move(allOf_)});
        if (branches_.back().anyOf.size() == 1) std::erase(branches_.back().allOf, branches_.back().anyOf[0]);
        allOf_.clear();
      }
      if (!branch.cover) out.cover.reset();
      if (out.cover) out.cover->insert(out.cover->end(), branch.cover->begin(), branch.cover->end());
      out.prefixes.insert(out.prefixes.end(), branch.prefixes.begin(), branch.prefixes.end());
      out.exact = out.exact && branch.exact;
      if (!at('|')) break;
      ++i_;
    }
    --depth_;
    if (out.prefixes.size() > kMaxProduct) out = {out.cover, {""}, false};
    return out;
  }

  // A concatenation. `run` holds the strings the adjacent exact atoms read so far can be; it
  // ends where an inexact atom starts, giving run x (that atom's prefixes) as one candidate.
  // Any candidate will do; the rarest (see rarity()) is kept, then the one of fewer literals.
  Part sequence(bool& ci) {
    std::vector<std::vector<std::string>> candidates;
    std::vector<std::string> run{""};
    std::optional<std::vector<std::string>> prefixes;  // set when the leading exact run ends
    auto endRun = [&](const std::vector<std::string>& next) {
      std::vector<std::string> joined = product(run, next).value_or(run);
      if (shortest(joined) >= kMinRequiredLiteral) candidates.push_back(joined);
      if (depth_ == 1 && joined.size() == 1 && joined[0].size() >= 2) allOf_.push_back(joined[0]);
      if (!prefixes) prefixes = joined;
      run = {""};
    };
    const std::vector<std::string> nothing{""};
    while (!bad_ && i_ < p_.size() && !at('|') && !at(')')) {
      enum class Kind { kChar, kGroup, kAssertion, kOther } kind = Kind::kOther;
      std::string ch;
      Part group;
      char c = p_[i_];
      if (c == '(') {
        ++i_;
        bool groupCi = ci;
        if (at('?')) {
          ++i_;
          if (at('P') || at('<')) {  // (?P<name>...) or (?<name>...)
            std::size_t close = p_.find('>', i_);
            if (close == std::string_view::npos) return fail();
            i_ = close + 1;
          } else {
            bool negate = false;
            while (i_ < p_.size() && std::string_view("imsU-").find(p_[i_]) != std::string_view::npos) {
              if (p_[i_] == '-') negate = true;
              if (p_[i_] == 'i') groupCi = !negate;
              ++i_;
            }
            if (at(')')) {  // (?i): the flags hold for the rest of the enclosing group
              ++i_;
              ci = groupCi;
              continue;
            }
            if (!at(':')) return fail();
            ++i_;
          }
        }
        group = alternation(groupCi);
        if (!at(')')) return fail();
        ++i_;
        kind = Kind::kGroup;
      } else if (c == '[') {
        if (!skipClass()) return fail();
      } else if (c == '\\') {
        bool assertion = false;
        if (!escape(ch, assertion)) return fail();
        if (!ch.empty()) kind = Kind::kChar;
        if (assertion) kind = Kind::kAssertion;
      } else if (c == '^' || c == '$') {
        ++i_;
        kind = Kind::kAssertion;
      } else if (c == '.') {
        ++i_;
      } else if (c == '*' || c == '+' || c == '?') {
        return fail();  // a quantifier with nothing before it
      } else {
        std::size_t len = utf8Length(static_cast<unsigned char>(c));
        ch = std::string(p_.substr(i_, len));
        i_ += len;
        kind = Kind::kChar;
      }
      std::size_t minRepeat = 1;
      bool quantified = quantifier(minRepeat);
      if (kind == Kind::kAssertion && !quantified) continue;  // matches no text: runs go on across it
      if (kind == Kind::kChar) {
        // In a case-insensitive part only ASCII other than k and s compares like ASCII.
        unsigned char first = static_cast<unsigned char>(ch[0]);
        bool usable = !(ci && (first >= 0x80 || lowerAscii(ch[0]) == 'k' || lowerAscii(ch[0]) == 's'));
        std::string lowered;
        for (char b : ch) lowered += lowerAscii(b);
        if (usable && !quantified) {
          for (std::string& r : run) r += lowered;
        } else if (usable && minRepeat >= 1) {
          endRun({lowered});  // "x+": one x is certain, what follows it is not adjacent
        } else {
          endRun(nothing);
        }
      } else if (kind == Kind::kGroup) {
        if (minRepeat >= 1 && group.cover) candidates.push_back(*group.cover);
        std::optional<std::vector<std::string>> joined;
        if (group.exact && !quantified) joined = product(run, group.prefixes);
        if (joined) {
          run = std::move(*joined);
        } else {
          endRun(minRepeat >= 1 ? group.prefixes : nothing);
        }
      } else {
        endRun(nothing);
      }
    }
    if (bad_) return fail();
    bool exact = !prefixes;
    endRun(nothing);
    Part out{std::nullopt, std::move(*prefixes), exact};
    std::size_t best = candidates.size();
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      if (best == candidates.size()) {
        best = k;
        continue;
      }
      std::size_t a = rarity(candidates[k]), b = rarity(candidates[best]);
      if (a > b || (a == b && candidates[k].size() < candidates[best].size())) best = k;
    }
    if (best < candidates.size()) out.cover = std::move(candidates[best]);
    return out;
  }

  // "*", "+", "?", "{n}", "{n,}", "{n,m}", each maybe followed by '?'; a '{' that starts no
  // repetition is a literal in RE2 and is left for the caller.
  bool quantifier(std::size_t& minRepeat) {
    if (at('*') || at('?')) {
      minRepeat = 0;
    } else if (at('+')) {
      minRepeat = 1;
    } else if (at('{')) {
      std::size_t j = i_ + 1, n = 0;
      bool digits = false;
      while (j < p_.size() && std::isdigit(static_cast<unsigned char>(p_[j]))) {
        n = std::min<std::size_t>(n * 10 + (p_[j] - '0'), 100000);
        digits = true;
        ++j;
      }
      if (!digits) return false;
      if (j < p_.size() && p_[j] == ',') {
        ++j;
        while (j < p_.size() && std::isdigit(static_cast<unsigned char>(p_[j]))) ++j;
      }
      if (j >= p_.size() || p_[j] != '}') return false;
      minRepeat = n;
      i_ = j;
    } else {
      return false;
    }
    ++i_;
    if (at('?')) ++i_;
    return true;
  }

  // A class is never part of a literal: skip to its closing ']'.
  bool skipClass() {
    ++i_;
    if (at('^')) ++i_;
    if (at(']')) ++i_;  // a leading ']' is a member
    while (i_ < p_.size() && p_[i_] != ']') {
      if (p_[i_] == '\\') {
        ++i_;
      } else if (p_[i_] == '[' && i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
        std::size_t close = p_.find(":]", i_ + 2);
        if (close == std::string_view::npos) return false;
        i_ = close + 1;
      }
      ++i_;
    }
    if (i_ >= p_.size()) return false;
    ++i_;
    return true;
  }

  // An escape: `ch` gets the character it stands for, or stays empty for a class (\d, \pL)
  // or an assertion (\b, \A: `assertion` set). False for what this reader does not follow
  // (\Q, \x, \1).
  bool escape(std::string& ch, bool& assertion) {
    ++i_;
    if (i_ >= p_.size()) return false;
    char e = p_[i_++];
    switch (e) {
      case 'n': ch = "\n"; return true;
      case 't': ch = "\t"; return true;
      case 'r': ch = "\r"; return true;
      case 'f': ch = "\f"; return true;
      case 'v': ch = "\v"; return true;
      case 'a': ch = "\a"; return true;
      case 'b':
      case 'B':
      case 'A':
      case 'z': assertion = true; return true;
      case 'd':
      case 'D':
      case 's':
      case 'S':
      case 'w':
      case 'W':
      case 'C': return true;
      case 'p':
      case 'P':
        if (at('{')) {
          std::size_t close = p_.find('}', i_);
          if (close == std::string_view::npos) return false;
          i_ = close + 1;
        } else if (i_ < p_.size()) {
          ++i_;
        }
        return true;
      default:
        // RE2 reads a backslash before any ASCII character but a letter or digit as that
        // character ("\ " from RE2::QuoteMeta is a space).
        if (static_cast<unsigned char>(e) < 0x80 && !std::isalnum(static_cast<unsigned char>(e))) {
          ch = std::string(1, e);
          return true;
        }
        return false;
    }
  }

  Part fail() {
    bad_ = true;
    return {};
  }

  std::string_view p_;
  std::size_t i_ = 0;
  bool bad_ = false;
  int depth_ = 0;                           // groups open, plus one for the whole pattern
  std::vector<std::string> allOf_;          // exact runs of the current branch of the whole pattern
  std::vector<RequiredLiterals> branches_;  // per branch of the whole pattern
};

}  // namespace

std::optional<std::vector<RequiredLiterals>> requiredLiterals(std::string_view pattern) {
  return LiteralReader(pattern).read();
}

std::optional<std::string> plainLiteral(std::string_view pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\') {
      if (++i >= pattern.size()) return std::nullopt;
      unsigned char e = static_cast<unsigned char>(pattern[i]);
      if (e >= 0x80 || std::isalnum(e)) return std::nullopt;
      out += pattern[i];
    } else if (std::string_view("()[]{}|*+?.^$").find(c) != std::string_view::npos) {
      return std::nullopt;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace gpupeer::kb_detail
