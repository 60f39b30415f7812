#include "ranks/call_signature.hpp"

#include <fmt/format.h>

namespace gpupeer {
namespace {

constexpr std::uint32_t kMarker = 1u << 31;
constexpr std::uint32_t kRegistered = 1u << 30;
constexpr std::size_t kCountBits = 46;

}  // namespace

CallSignature callSignatureOf(CollOp op, DataType type, RedOp redop, int root, std::size_t count, bool registered) {
  const std::uint64_t c = static_cast<std::uint64_t>(count) & ((std::uint64_t{1} << kCountBits) - 1);
  CallSignature s;
  s.word0 = kMarker | (registered ? kRegistered : 0u) | static_cast<std::uint32_t>(op) |
            static_cast<std::uint32_t>(type) << 4 | (collOpReduces(op) ? static_cast<std::uint32_t>(redop) << 8 : 0u) |
            (collOpRooted(op) ? (static_cast<std::uint32_t>(root) & 0xf) << 12 : 0u) |
            static_cast<std::uint32_t>(c >> 32) << 16;
  s.word1 = static_cast<std::uint32_t>(c);
  return s;
}

std::string describeCall(const CallSignature& s) {
  const std::uint32_t op = s.word0 & 0xf, type = s.word0 >> 4 & 0xf, redop = s.word0 >> 8 & 0xf,
                      root = s.word0 >> 12 & 0xf;
  if (!(s.word0 & kMarker) || op > static_cast<std::uint32_t>(CollOp::kAllToAll) || type >= std::size(kAllDataTypes) ||
      redop > static_cast<std::uint32_t>(RedOp::kAvg))
    return fmt::format("an unknown call ({:08x} {:08x})", s.word0, s.word1);
  const CollOp o = static_cast<CollOp>(op);
  const std::uint64_t count = static_cast<std::uint64_t>(s.word0 >> 16 & 0x3fff) << 32 | s.word1;
  std::string text = fmt::format("{} of {} {}", collOpName(o), count, dataTypeName(static_cast<DataType>(type)));
  if (s.word0 & kRegistered) text += " on registered buffers";
  if (collOpReduces(o) && collOpRooted(o))
    return text + fmt::format(" ({}, root {})", redOpName(static_cast<RedOp>(redop)), root);
  if (collOpReduces(o)) return text + fmt::format(" ({})", redOpName(static_cast<RedOp>(redop)));
  if (collOpRooted(o)) return text + fmt::format(" (root {})", root);
  return text;
}

}  // namespace gpupeer
