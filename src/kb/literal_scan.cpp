#include "literal_scan.hpp"

#include <algorithm>
#include <cstring>

#include "regex_literals.hpp"

namespace gpupeer::kb_detail {
namespace {

// Up to 8 bytes of `p` (fewer when `n` < 8: zero-padded), little-endian.
std::uint64_t head8(const char* p, std::size_t n) {
  std::uint64_t x = 0;
  std::memcpy(&x, p, n < 8 ? n : 8);
  return x;
}

std::uint32_t prefix3(const char* p) {
  return std::uint32_t{static_cast<unsigned char>(p[0])} | std::uint32_t{static_cast<unsigned char>(p[1])} << 8 |
         std::uint32_t{static_cast<unsigned char>(p[2])} << 16;
}

// Three-byte keys to avoid: those of words on nearly every line of GPU logs. Only speed
// depends on this list.
bool commonKey(std::string_view key) {
  static const std::vector<std::uint32_t> kKeys = [] {
    static constexpr std::string_view kWords[] = {
        " nccl ",   " info ", " warn ",   " cuda ", " gpu ",  " nvidia ",  " device ", " devices ", " error ",
        " failed ", " peer ", " access ", " rank ", " comm ", " channel ", " memory ", " version ", " driver ",
        " the ",    " and ",  " for ",    " not ",  " with ", " from ",    " to ",     " is ",      " in ",
        " on ",     " of ",   " via ",    " set ",  " ing ",  " tion ",    " enable ", " support ", " supported "};
    std::vector<std::uint32_t> keys;
    for (std::string_view w : kWords)
      for (std::size_t i = 0; i + 3 <= w.size(); ++i) keys.push_back(prefix3(w.data() + i));
    std::sort(keys.begin(), keys.end());
    return keys;
  }();
  return std::binary_search(kKeys.begin(), kKeys.end(), prefix3(key.data()));
}

// How common a character is in log text, roughly (letters by their frequency in English).
long charCost(char c) {
  if ((c >= '0' && c <= '9') || c == ' ') return 10;
  if (std::string_view("etaoinsr").find(c) != std::string_view::npos) return 6;
  if (std::string_view("hldcumfpgwby").find(c) != std::string_view::npos) return 4;
  if (c >= 'a' && c <= 'z') return 1;
  return 2;  // punctuation
}

}  // namespace

void lowerAsciiInto(std::string_view text, std::string& out) {
  out.resize(text.size());
  const char* in = text.data();
  char* to = out.data();
  std::size_t i = 0;
  // Eight bytes at a time: bit 7 of each byte of `upper` says "was 'A'..'Z'"; shifted to
  // bit 5 it is the 0x20 that lowercases it.
  constexpr std::uint64_t kOnes = 0x0101010101010101u;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t x;
    std::memcpy(&x, in + i, 8);
    std::uint64_t low7 = x & (0x7f * kOnes);
    std::uint64_t atLeastA = low7 + (0x80 - 'A') * kOnes;
    std::uint64_t aboveZ = low7 + (0x80 - 'Z' - 1) * kOnes;
    std::uint64_t upper = atLeastA & ~aboveZ & ~x & (0x80 * kOnes);
    x |= upper >> 2;
    std::memcpy(to + i, &x, 8);
  }
  for (; i < text.size(); ++i) {
    char c = in[i];
    to[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
  }
}

void LiteralScan::add(const std::string& literal, int owner) {
  if (literal.size() < kMinRequiredLiteral) return;  // the caller checks: such a literal is no gate
  for (Literal& l : literals_)
    if (l.text == literal) {
      l.owners.push_back(owner);
      return;
    }
  // The key: three bytes not of a common word, of characters rare in logs (digits, spaces and
  // the commonest letters of English are not), sharing a bucket with few other literals; the
  // first such.
  std::size_t keyAt = 0;
  long best = 0;
  for (std::size_t at = 0; at + 3 <= literal.size(); ++at) {
    std::string_view key = std::string_view(literal).substr(at, 3);
    long cost = (commonKey(key) ? 1000 : 0) + static_cast<long>(byHash_[bucketOf(hash(prefix3(key.data())))].size());
    for (char c : key) cost += charCost(c);
    if (at == 0 || cost < best) {
      best = cost;
      keyAt = at;
    }
  }
  std::uint32_t h = hash(prefix3(literal.data() + keyAt));
  bitmap_[h >> 6] |= std::uint64_t{1} << (h & 63);
  std::size_t n = std::min<std::size_t>(literal.size(), 8);
  std::uint64_t mask = n == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * n)) - 1;
  byHash_[bucketOf(h)].push_back(
      {head8(literal.data(), n), mask, h, static_cast<std::uint32_t>(keyAt), static_cast<int>(literals_.size())});
  literals_.push_back({literal, {owner}});
}

void LiteralScan::checkAt(std::string_view lowered, std::size_t keyAt, std::uint32_t h,
                          std::vector<int>& owners) const {
  for (const Candidate& c : byHash_[bucketOf(h)]) {
    if (c.keyHash != h || c.keyAt > keyAt) continue;  // another key, or it would start before the line
    std::size_t at = keyAt - c.keyAt;
    std::size_t left = lowered.size() - at;
    if ((head8(lowered.data() + at, left) & c.headMask) != c.head) continue;
    const Literal& l = literals_[c.literal];
    if (l.text.size() > left) continue;
    if (l.text.size() > 8 && std::memcmp(lowered.data() + at + 8, l.text.data() + 8, l.text.size() - 8) != 0) continue;
    owners.insert(owners.end(), l.owners.begin(), l.owners.end());
  }
}

void LiteralScan::scan(std::string_view lowered, std::vector<int>& owners) const {
  const std::size_t n = lowered.size();
  if (n < kMinRequiredLiteral) return;
  const char* p = lowered.data();
  std::size_t i = 0;
  // Four-byte loads, no dependence between positions: the CPU overlaps them.
  for (; i + 4 <= n; ++i) {
    std::uint32_t word;
    std::memcpy(&word, p + i, 4);
    std::uint32_t h = hash(word & 0xffffff);
    if (bitmap_[h >> 6] >> (h & 63) & 1) checkAt(lowered, i, h, owners);
  }
  for (; i + 3 <= n; ++i) {  // the last position
    std::uint32_t h = hash(prefix3(p + i));
    if (bitmap_[h >> 6] >> (h & 63) & 1) checkAt(lowered, i, h, owners);
  }
}

}  // namespace gpupeer::kb_detail
