// The GPU actions of the doctor: whether processes can share GPU memory, a short P2P data check
// and a copy-engine bandwidth per pair.
#include "gpupeer/bench.hpp"
#include "gpupeer/doctor.hpp"

namespace gpupeer {

Measurements measureForDoctor(const Snapshot& snapshot) {
  Measurements m;
  // One GPU is enough to share memory between processes (ranks of one GPU, or a server and its
  // clients); every custom all-reduce needs it first.
  if (!snapshot.gpus.empty()) {
    Result<IpcCheckReport> ipc = runIpcCheck(snapshot, snapshot.gpus[0].index);
    if (ipc.isOk())
      m.ipc = ipc.value();
    else
      m.notRun.push_back("cross-process memory sharing: " + ipc.status().message());
  }
  if (snapshot.gpus.size() < 2) {
    m.notRun.push_back("P2P data check and bandwidth: fewer than two GPUs");
    return m;
  }
  CheckOptions check;
  check.largeBytes = 8u << 20;  // enough to cross every code path; keeps 56 pairs under 30 s
  Result<CheckReport> report = runPeerCheck(snapshot, check);
  if (report.isOk())
    m.check = report.value();
  else
    m.notRun.push_back("P2P data check: " + report.status().toString());
  const BenchTestcase* ce = findBenchTestcase("ce_write");
  BenchOptions bench;
  bench.bytes = 64u << 20;  // past the L2 of current GPUs, short enough for a quick look
  bench.samples = 3;
  bench.copiesPerSample = 4;
  BenchResult r = ce->run(snapshot, bench);
  for (const BenchCell& c : r.cells)
    if (c.value.samples > 0 && c.row >= 0 && c.col >= 0)
      m.copyEngineGBps[{c.row, c.col}] = c.value.median;
    else if (c.note.rfind("FAIL", 0) == 0)
      m.notRun.push_back("bandwidth " + c.label + ": " + c.note);
  return m;
}

}  // namespace gpupeer
