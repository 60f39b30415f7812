#include "collectives/line128_rules.hpp"

namespace gpupeer {

std::size_t line128FromBytesFor(int ranks) { return ranks == 2 ? 0 : 64u << 10; }

std::size_t line128SlotBytesFor(int ranks) { return ranks == 2 ? 18u << 20 : 2u << 20; }

int line128LagFor(std::size_t bytes) {
  constexpr std::size_t kMiB = 1u << 20;
  return bytes < 4 * kMiB ? 2 : bytes < 8 * kMiB ? 1 : 0;
}

std::size_t line128SlotBytesAcrossProcessesFor(int ranks) { return ranks == 2 ? 18u << 20 : 8u << 20; }

bool relayTakesLines128(int ranks, std::size_t bytes) { return ranks >= 3 && bytes <= (64u << 20); }

int line128BlocksFor(int ranks, int sms) { return ranks == 2 ? 3 * sms : sms; }

}  // namespace gpupeer
