// Reads a snapshot file with the installed gpupeer library and prints what it knows about the
// machine: GPU count, the connection of the first pair, and the doctor's verdict.
// Usage: gpupeer_consumer SNAPSHOT.json
#include <cstdio>

#include "gpupeer/doctor.hpp"
#include "gpupeer/kb.hpp"
#include "gpupeer/snapshot_json.hpp"
#include "gpupeer/topology.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SNAPSHOT.json\n", argv[0]);
    return 2;
  }
  gpupeer::Result<gpupeer::Snapshot> snapshot = gpupeer::loadSnapshotFile(argv[1]);
  if (!snapshot.isOk()) {
    std::fprintf(stderr, "%s\n", snapshot.status().toString().c_str());
    return 1;
  }
  const gpupeer::Snapshot& s = snapshot.value();
  std::printf("GPUs: %zu\n", s.gpus.size());
  if (s.gpus.size() >= 2) std::printf("GPU0-GPU1: %s\n", gpupeer::topoCell(s, 0, 1).c_str());
  std::printf("doctor: %s\n", gpupeer::diagnose(s, nullptr).verdict.c_str());
  // A KB entry's regex is compiled by RE2, so this also proves RE2 links.
  gpupeer::KnowledgeBase kb;
  gpupeer::KbEntry entry;
  entry.id = "example/peer-unsupported";
  entry.regex = "peer access is not supported";
  gpupeer::Status added = kb.add(entry);
  std::printf("KB entry added: %s\n", added.isOk() ? "yes" : added.toString().c_str());
  return added.isOk() ? 0 : 1;
}
