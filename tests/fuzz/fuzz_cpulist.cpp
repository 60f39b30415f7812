// libFuzzer target: see cpuListBody in fuzz_bodies.hpp.
#include "fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gpupeer::fuzz::cpuListBody(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
