// The build without CUDA (GPUPEER_WITH_CUDA=OFF): in place of the code that reads and drives
// the GPUs (src/probe, doctor_measure.cpp, peer_check.cpp, ipc_check.cpp, bench_testcases.cpp), which the build
// leaves out, the functions the offline code calls, saying that this build cannot. Snapshot
// files are analysed as in any build; callers ask builtWithCuda() before reaching for the
// machine.
#include <fmt/format.h>

#include "gpupeer/bench.hpp"
#include "gpupeer/doctor.hpp"
#include "gpupeer/ipc_check.hpp"
#include "gpupeer/peer_check.hpp"
#include "gpupeer/probe.hpp"

namespace gpupeer {

bool builtWithCuda() { return false; }

Snapshot probeMachine(const ProbeOptions&) {
  Snapshot s;
  s.description = fmt::format("not probed: {}", kBuiltWithoutCuda);
  const std::string why = fmt::format("{}: reading the machine needs a build with CUDA", kBuiltWithoutCuda);
  s.driverVersion = Known<std::string>::unknown(why);
  s.deviceCount = Known<int>::unknown(why);
  s.cudaDriverVersion = Known<int>::unknown(why);
  s.cudaRuntimeVersion = Known<int>::unknown(why);
  return s;
}

Measurements measureForDoctor(const Snapshot&) {
  Measurements m;
  m.notRun.push_back(fmt::format("GPU actions ({})", kBuiltWithoutCuda));
  return m;
}

Result<CheckReport> runPeerCheck(const Snapshot&, const CheckOptions&) {
  return GPUPEER_ERROR(ErrorCode::kUnsupported,
                       fmt::format("{}: the P2P data check needs a build with CUDA", kBuiltWithoutCuda));
}

Result<IpcCheckReport> runIpcCheck(const Snapshot&, int) {
  return GPUPEER_ERROR(ErrorCode::kUnsupported,
                       fmt::format("{}: the cross-process check needs a build with CUDA", kBuiltWithoutCuda));
}

// The testcases are their run functions' (GPU code): a results file's descriptions come from the
// file alone (gpupeer bench --json writes one with every result).
const BenchTestcase* findBenchTestcase(const std::string&) { return nullptr; }

}  // namespace gpupeer
