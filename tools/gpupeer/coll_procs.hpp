#pragma once
// `gpupeer coll --procs N`: the collectives with one process per rank (RankCommunicator), the
// shape PyTorch and vLLM run in. The command starts N copies of itself, each one rank on its
// own GPU (rank % visible GPUs: on one GPU every rank shares it, which checks results but
// does not measure speed), and rank 0 prints nccl-tests' table with NCCL in the same shape
// (ncclCommInitRank per process) as the baseline.

#include <optional>
#include <string>
#include <vector>

#include "gpupeer/collective_types.hpp"

namespace gpupeer::cli {

struct CollProcsOptions {
  CollOp op = CollOp::kAllReduce;
  DataType type = DataType::kFloat32;
  RedOp redop = RedOp::kSum;
  int root = 0;
  std::vector<std::size_t> sizes;  // nccl-tests' size column
  int procs = 2;
  int iters = 20, warmup = 5, graphLaunches = 0, check = 1;
  bool nccl = false;
  std::string output;         ///< -o/--output: the JSON document also written to this file
  bool json = false;          ///< --json: the JSON document on standard output instead of the table
  bool progress = false;      ///< --progress: rank 0 writes a line per finished size to standard error
  std::size_t slotBytes = 0;  ///< RankCommOptions::slotBytes; 0: its default
  bool registered = false;    ///< each rank's send and receive buffers registered
  std::optional<std::size_t> zeroCopyFromBytes;  ///< RankCommOptions::zeroCopyFromBytes where given
  /// The parent's command line (from "coll" on), which each rank reruns with its rank added.
  std::vector<std::string> args;
  /// Set in the processes the parent starts.
  int rank = -1;
  std::string idHex;
};

/// The parent: starts the ranks, waits for them; the worst exit code of any rank.
int runCollProcsParent(const CollProcsOptions& o);
/// One rank: joins, measures, checks; rank 0 prints.
int runCollProcsRank(const CollProcsOptions& o);

}  // namespace gpupeer::cli
