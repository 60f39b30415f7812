#pragma once
// Finding many short literals in a line at once, ignoring ASCII case: the KB matcher's first
// look at each line. Each literal is keyed by three of its bytes, chosen to be rare in GPU logs
// (not the "ncc" of "NCCL INFO" on every line of an NCCL log). The line is lowercased once; a
// 4 KiB bitmap of hashed keys then rejects almost every position with one load, a multiply and
// a bit test, and a position whose three bytes are a key is checked against the literals of
// that key (their first 8 bytes in one compare). Time is linear in the line (times the few
// literals sharing a key).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpupeer::kb_detail {

/// `text` with ASCII letters lowercased, into `out` (its storage reused).
void lowerAsciiInto(std::string_view text, std::string& out);

class LiteralScan {
 public:
  /// Looks for `literal` (at least kMinRequiredLiteral bytes, ASCII-lowercased); a find reports
  /// `owner`. The same literal may be added for several owners.
  void add(const std::string& literal, int owner);
  /// Appends to `owners` each owner one of whose literals occurs in `lowered` (a line passed
  /// through lowerAsciiInto); an owner may come more than once. Const: safe from several
  /// threads.
  void scan(std::string_view lowered, std::vector<int>& owners) const;

 private:
  static constexpr int kHashBits = 15;
  static std::uint32_t hash(std::uint32_t prefix) { return (prefix * 2654435761u) >> (32 - kHashBits); }
  void checkAt(std::string_view lowered, std::size_t keyAt, std::uint32_t h, std::vector<int>& owners) const;

  struct Literal {
    std::string text;
    std::vector<int> owners;
  };
  struct Candidate {         // a literal in the bucket of its key's hash
    std::uint64_t head;      // its first 8 bytes (fewer: zero-padded), little-endian
    std::uint64_t headMask;  // the bytes of `head` that are the literal's
    std::uint32_t keyHash;   // hash of its key
    std::uint32_t keyAt;     // where in the literal its three-byte key starts
    int literal;             // index into literals_
  };
  std::vector<Literal> literals_;
  std::uint64_t bitmap_[(1u << kHashBits) / 64] = {};
  // Buckets by the top kBucketBits of the key hash: 24 KiB of vectors that stay in cache
  // (one per hash, 32768 of them, took a cache miss per position checked).
  static constexpr int kBucketBits = 10;
  static std::uint32_t bucketOf(std::uint32_t h) { return h >> (kHashBits - kBucketBits); }
  std::vector<std::vector<Candidate>> byHash_ = std::vector<std::vector<Candidate>>(1u << kBucketBits);
};

}  // namespace gpupeer::kb_detail
