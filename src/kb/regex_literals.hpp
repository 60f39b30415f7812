#pragma once
// Literals a regex cannot match without: the KB matcher looks for them first (a cheap scan of
// each line) and runs only the regexes whose literals a line holds.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpupeer::kb_detail {

/// Shortest literal the matcher's scan looks for (it hashes the first three bytes).
inline constexpr std::size_t kMinRequiredLiteral = 3;

/// What every match of one branch of a pattern contains, compared without ASCII case
/// (ASCII-lowercased).
struct RequiredLiterals {
  std::vector<std::string> anyOf;  ///< one of these, each kMinRequiredLiteral bytes or more
  std::vector<std::string> allOf;  ///< every one of these (2 bytes or more; may be empty)
};

/// For each branch of `pattern`'s top-level alternation (RE2 syntax; one when it has no '|'),
/// the literals every match through that branch contains; nullopt when some branch can match
/// without any literal of kMinRequiredLiteral bytes or more, or the pattern uses syntax this
/// reader does not follow (the caller then runs the regex on every line). Case-insensitive
/// parts end a literal at 'k' and 's' (Unicode folds them with U+212A and U+017F) and at
/// non-ASCII characters.
std::optional<std::vector<RequiredLiterals>> requiredLiterals(std::string_view pattern);

/// The text `pattern` matches when it is a plain literal (escaped punctuation allowed, no
/// operator, class or flag); nullopt otherwise.
std::optional<std::string> plainLiteral(std::string_view pattern);

}  // namespace gpupeer::kb_detail
