// gpupeer coll: nccl-tests' table for gpupeer's collectives, every result checked against a
// host reference, eagerly or replayed from a CUDA graph (-G), with NCCL on the same buffers
// as the baseline (--baseline nccl: eager NCCL; with -G, NCCL in graphs and NCCL in graphs
// with symmetric registered windows).
//
// Short options follow nccl-tests where their letter means the same in every gpupeer
// subcommand (-b -e -f -n -w -G -c -r -g); nccl-tests' -d (data type) and -o (reduction) are
// --datatype and --op, because -d is --devices and -o is --output everywhere in gpupeer.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "coll_procs.hpp"
#include "coll_runner.hpp"
#include "collectives/tuning_variables.hpp"
#include "core/bounded_input.hpp"
#include "core/output_file.hpp"
#include "core/sweep_progress.hpp"
#include "gpupeer/bench.hpp"
#include "gpupeer/communicator.hpp"
#include "gpupeer/peer_check.hpp"
#include "gpupeer/rank_communicator.hpp"
#include "harness/collective_reference.hpp"
#include "harness/nccl_baseline.hpp"

namespace gpupeer::cli {
namespace {

struct Options {
  std::string op = "all_reduce";
  std::string begin = "8", end = "128M", type = "float", redop = "sum", devices, baseline, output;
  bool json = false;      // the JSON document on standard output instead of the table
  bool progress = false;  // a line per finished size on standard error, also where it is no terminal
  double factor = 2;
  int gpus = 0, iters = 20, warmup = 5, root = 0, graphLaunches = 0, check = 1;
  int procs = 0, procRank = -1;  // --procs: one process per rank (coll_procs.hpp)
  std::string procId, slot;      // --slot: RankCommOptions::slotBytes (with --procs)
  bool registered = false;       // --registered (with --procs)
  std::string zeroCopyFrom;      // --zero-copy-from: RankCommOptions::zeroCopyFromBytes (with --procs)
  bool tuningVariables = false;  // --tuning-variables: print their table and exit
};

struct Measured {
  double seconds = 0;
  std::size_t wrong = 0;
  std::string error;  // set when the run failed (the table says so and goes on)
};

struct Baseline {
  std::string name;  // "nccl", "nccl_graph", "nccl_symmetric"
  std::vector<CollRank>* ranks;
};

// Largest message of a sweep; past it the host reference alone would need tens of GiB.
constexpr std::size_t kMaxCollBytes = std::size_t{16} << 30;

// One process per rank: the parent starts the ranks with this command line and their rank.
int runProcs(const Options& o, CollOp op, DataType type, RedOp redop, const std::vector<std::size_t>& sizes) {
  if (o.procs == 0) {
    fmt::print(stderr, "gpupeer coll: --proc-rank needs --procs\n");
    return kExitUsage;
  }
  if (o.procs < 1 || o.procs > kMaxCommRanks) {
    fmt::print(stderr, "gpupeer coll: --procs {}: give 1 to {} processes\n", o.procs, kMaxCommRanks);
    return kExitUsage;
  }
  if (o.procRank >= o.procs) {
    fmt::print(stderr, "gpupeer coll: --proc-rank {} is not a rank of --procs {} (0 to {})\n", o.procRank, o.procs,
               o.procs - 1);
    return kExitUsage;
  }
  if (collOpRooted(op) && (o.root < 0 || o.root >= o.procs)) {
    fmt::print(stderr, "gpupeer coll: root {} is not a rank (0 to {})\n", o.root, o.procs - 1);
    return kExitUsage;
  }
  CollProcsOptions p;
  p.op = op;
  p.type = type;
  p.redop = redop;
  p.root = o.root;
  p.sizes = sizes;
  p.procs = o.procs;
  p.iters = o.iters;
  p.warmup = o.warmup;
  p.graphLaunches = o.graphLaunches;
  p.check = o.check;
  p.nccl = o.baseline == "nccl";
  p.output = o.output;
  p.json = o.json;
  p.progress = o.progress;
  p.rank = o.procRank;
  p.idHex = o.procId;
  p.args = {"coll",       o.op,
            "-b",         o.begin,
            "-e",         o.end,
            "-f",         fmt::format("{}", o.factor),
            "--datatype", o.type,
            "--op",       o.redop,
            "-r",         std::to_string(o.root),
            "-n",         std::to_string(o.iters),
            "-w",         std::to_string(o.warmup),
            "-G",         std::to_string(o.graphLaunches),
            "-c",         std::to_string(o.check),
            "--procs",    std::to_string(o.procs)};
  if (!o.baseline.empty()) p.args.insert(p.args.end(), {"--baseline", o.baseline});
  if (!o.output.empty()) p.args.insert(p.args.end(), {"--output", o.output});
  if (o.json) p.args.push_back("--json");
  if (o.progress) p.args.push_back("--progress");
  if (!o.slot.empty()) {
    Result<std::size_t> slot = parseByteSize(o.slot);
    if (!slot.isOk()) return reportError(slot.status());
    p.slotBytes = slot.value();
    p.args.insert(p.args.end(), {"--slot", o.slot});
  }
  if (o.registered) {
    p.registered = true;
    p.args.push_back("--registered");
  }
  if (!o.zeroCopyFrom.empty()) {
    Result<std::size_t> from = parseByteSize(o.zeroCopyFrom);
    if (!from.isOk()) return reportError(from.status());
    p.zeroCopyFromBytes = from.value();
    p.args.insert(p.args.end(), {"--zero-copy-from", o.zeroCopyFrom});
  }
  return o.procRank >= 0 ? runCollProcsRank(p) : runCollProcsParent(p);
}

// Times `launch` on inputs of salt 0, then checks one more operation on inputs of salt 1 (the
// `checked` ones): a value left over from the timed operations differs from the one expected.
Measured measure(std::vector<CollRank>& ranks, const CollLaunch& launch, const CollBuffers& b, const Options& o,
                 CollOp op, DataType type, RedOp redop, std::size_t count,
                 const std::vector<std::vector<std::uint8_t>>& timed,
                 const std::vector<std::vector<std::uint8_t>>& checked) {
  Measured m;
  Status st = uploadInputs(ranks, b, timed);
  Result<double> t = st.isOk() ? timeCollective(ranks, launch, b, o.warmup, o.iters, o.graphLaunches) : st;
  if (!t.isOk()) {
    m.error = t.status().message();
    return m;
  }
  m.seconds = t.value();
  if (o.check) {
    st = uploadInputs(ranks, b, checked);
    if (st.isOk()) st = launch(b.send, b.recv);
    if (st.isOk()) st = syncRanks(ranks);
    auto wrong = st.isOk() ? countWrong(ranks, b, op, type, redop, o.root, count, checked) : Result<std::size_t>(st);
    if (!wrong.isOk()) m.error = wrong.status().message();
    m.wrong = wrong.isOk() ? wrong.value() : 0;
  }
  return m;
}

int run(const Options& o) {
  auto op = parseCollOp(o.op);
  auto type = parseDataType(o.type);
  auto redop = parseRedOp(o.redop);
  for (const Status& st : {op.status(), type.status(), redop.status()})
    if (!st.isOk()) return reportError(st);
  const CollOp cop = op.value();
  const DataType dtype = type.value();
  const RedOp rop = redop.value();
  if (collOpReduces(cop))
    if (Status st = checkRedOpForType(rop, dtype); !st.isOk()) return reportError(st);
  auto b = parseByteSize(o.begin), e = parseByteSize(o.end);
  if (!b.isOk()) return reportError(b.status());
  if (!e.isOk()) return reportError(e.status());
  auto sizes = sweepSizes(b.value(), e.value(), o.factor);
  if (!sizes.isOk()) return reportError(sizes.status());
  // Each wrong value named with what it may be, not every option's range at once.
  std::string wrong;
  if (o.iters < 1) wrong = fmt::format("-n {}: give 1 or more timed operations (-n >= 1)", o.iters);
  if (wrong.empty() && o.warmup < 0)
    wrong = fmt::format("-w {}: give 0 or more warm-up operations (-w >= 0)", o.warmup);
  if (wrong.empty() && o.graphLaunches < 0)
    wrong = fmt::format("-G {}: give 0 (eager) or more graph replays (-G >= 0)", o.graphLaunches);
  if (wrong.empty() && !o.baseline.empty() && o.baseline != "nccl")
    wrong = fmt::format("--baseline '{}': the only baseline is --baseline nccl", terminalSafe(o.baseline));
  if (!wrong.empty()) {
    fmt::print(stderr, "gpupeer coll: {}\n", wrong);
    return kExitUsage;
  }
  // The host reference holds every rank's input and output: a bound on the size keeps an
  // absurd -e from being expanded into host memory.
  if (sizes.value().back() > kMaxCollBytes) {
    fmt::print(stderr, "gpupeer coll: -e {}: at most {} GiB per rank\n", o.end, kMaxCollBytes >> 30);
    return kExitUsage;
  }
  if (o.gpus < 0 || o.root < 0 || o.check < 0) {
    fmt::print(stderr, "gpupeer coll: -g 0 (all) or a count of GPUs, -r >= 0, -c >= 0\n");
    return kExitUsage;
  }
  // The device list's form before the machine is touched; its numbers against the GPUs after.
  if (!o.devices.empty())
    if (auto list = parseDeviceList(o.devices, kAnyDeviceCount); !list.isOk()) return reportError(list.status());
  if (o.procs == 0 && o.procRank < 0 && (!o.slot.empty() || o.registered || !o.zeroCopyFrom.empty())) {
    fmt::print(stderr, "gpupeer coll: --slot, --registered and --zero-copy-from apply to --procs\n");
    return kExitUsage;
  }
  if (!o.zeroCopyFrom.empty() && !o.registered) {
    fmt::print(stderr, "gpupeer coll: --zero-copy-from applies to --registered buffers\n");
    return kExitUsage;
  }
  if (o.procs != 0 || o.procRank >= 0) return runProcs(o, cop, dtype, rop, sizes.value());
  Snapshot s = probeMachine();
  const int visible = static_cast<int>(s.gpus.size());
  if (visible < 1) {
    fmt::print(stderr, "gpupeer coll: needs a GPU; none visible: {}\n", terminalSafe(whyNoGpu(s)));
    return kExitNotApplicable;
  }
  std::vector<int> devices;
  if (!o.devices.empty()) {
    auto list = parseDeviceList(o.devices, visible);
    if (!list.isOk()) return reportError(list.status());
    devices = list.value();
  } else {
    if (o.gpus > visible) {
      fmt::print(stderr, "gpupeer coll: -g {} but only {} GPUs are visible\n", o.gpus, visible);
      return kExitNotApplicable;
    }
    for (int d = 0; d < (o.gpus > 0 ? o.gpus : visible); ++d) devices.push_back(d);
  }
  const int n = static_cast<int>(devices.size());
  if (n == 1) {  // a communicator of one rank, as NCCL's: every operation a local copy
    Options one = o;
    one.procs = 1;
    one.procRank = 0;
    Result<UniqueId> id = makeUniqueId();
    if (!id.isOk()) return reportError(id.status());
    one.procId = uniqueIdToHex(id.value());
    return runProcs(one, cop, dtype, rop, sizes.value());
  }
  if (collOpRooted(cop) && (o.root < 0 || o.root >= n)) {
    fmt::print(stderr, "gpupeer coll: root {} is not a rank (0 to {})\n", o.root, n - 1);
    return kExitUsage;
  }
  auto comm = Communicator::create(devices);
  if (!comm.isOk()) return reportError(comm.status());
  const std::size_t es = dataTypeSize(dtype);
  const std::size_t perRankDivisor =
      (cop == CollOp::kAllGather || cop == CollOp::kReduceScatter || cop == CollOp::kAllToAll)
          ? static_cast<std::size_t>(n)
          : 1;
  auto countFor = [&](std::size_t bytes) { return std::max<std::size_t>(1, bytes / (es * perRankDivisor)); };
  const std::size_t maxCount = countFor(sizes.value().back());
  const std::size_t sendBytes = collectiveInputElements(cop, maxCount, n) * es + 16;
  const std::size_t recvBytes = collectiveOutputElements(cop, maxCount, n) * es + 16;
  auto ranks = makeRanks(devices, std::max(sendBytes, recvBytes), std::max(sendBytes, recvBytes));
  if (!ranks.isOk()) return reportError(ranks.status());
  std::vector<cudaStream_t> streams;
  for (CollRank& r : ranks.value()) streams.push_back(r.stream);

  // The table goes to standard output; with --json the document goes there instead and what
  // the table's comments would say about the baseline goes to standard error.
  std::FILE* const notes = o.json ? stderr : stdout;
  std::unique_ptr<NcclBaseline> nccl;
  std::vector<CollRank> windowRanks;  // the same streams, NCCL's symmetric windows as buffers
  std::vector<Baseline> baselines;
  if (o.baseline == "nccl") {
    auto opened = NcclBaseline::open(devices);
    if (opened.isOk()) {
      nccl = std::move(opened).value();
      baselines.push_back({o.graphLaunches ? "nccl_graph" : "nccl", &ranks.value()});
      if (o.graphLaunches) {
        const std::size_t half = (std::max(sendBytes, recvBytes) + 4095) / 4096 * 4096;
        auto windows = nccl->allocateWindows(2 * half);
        if (windows.isOk()) {
          windowRanks = ranks.value();
          for (std::size_t r = 0; r < windowRanks.size(); ++r) {
            windowRanks[r].owned = false;
            windowRanks[r].sendBase = windows.value()[r];
            windowRanks[r].recvBase = static_cast<char*>(windows.value()[r]) + half;
          }
          baselines.push_back({"nccl_symmetric", &windowRanks});
        } else {
          fmt::print(notes, "# NCCL symmetric windows not measured: {}\n", windows.status().message());
        }
      }
    } else {
      fmt::print(notes, "# NCCL baseline not run: {}\n", opened.status().message());
    }
  }

  const bool withRoot = collOpRooted(cop);
  std::vector<std::string> about = {fmt::format("{} GPUs ({})", n, s.gpus[0].name), comm.value()->transport(),
                                    fmt::format("type {}", dataTypeName(dtype))};
  if (collOpReduces(cop)) about.push_back(fmt::format("op {}", redOpName(rop)));
  if (withRoot) about.push_back(fmt::format("root {}", o.root));
  about.push_back(o.graphLaunches
                      ? fmt::format("{} back-to-back operations captured in one CUDA graph, replayed {} times", o.iters,
                                    o.graphLaunches)
                      : fmt::format("{} warm-up + {} timed back-to-back operations", o.warmup, o.iters));
  if (!o.json) fmt::print("# gpupeer coll {}: {}\n", collOpName(cop), fmt::join(about, ", "));
  if (nccl && !o.json) fmt::print("# baseline: NCCL {} on the same streams\n", nccl->version());
  std::string head =
      fmt::format("# {:>11} {:>11} {:>8} {:>6} {:>4} {:>7} | {:>9} {:>7} {:>7} {:>6} | {:>9} {:>6} |", "size", "count",
                  "type", "redop", "root", "algo", "time us", "algbw", "busbw", "#wrong", "inplace", "#wrong");
  for (const Baseline& bl : baselines)
    head += fmt::format(" {:>14} {:>7} {:>6} {:>7} |", bl.name + " us", "busbw", "#wrong", "ratio");
  if (!o.json) fmt::print("{}\n", head);

  nlohmann::json doc = {{"op", collOpName(cop)},
                        {"type", dataTypeName(dtype)},
                        {"redop", collOpReduces(cop) ? redOpName(rop) : "none"},
                        {"root", withRoot ? o.root : -1},
                        {"gpus", n},
                        {"gpu_name", s.gpus[0].name},
                        {"mode", o.graphLaunches ? "graph" : "eager"},
                        {"transport", comm.value()->transport()},
                        {"nccl_version", nccl ? nccl->version() : ""},
                        {"rows", nlohmann::json::array()}};
  bool anyWrong = false, anyError = false, inPlaceDiffers = false;
  SweepProgress progress(fmt::format("gpupeer coll {}", collOpName(cop)), sizes.value().size(), o.progress);
  for (std::size_t bytes : sizes.value()) {
    const std::size_t count = countFor(bytes);
    const std::size_t shown = collectiveBytes(cop, count, dtype, n);
    std::vector<std::vector<std::uint8_t>> inputs, checked;
    for (int r = 0; r < n; ++r) {
      inputs.push_back(knownAnswerInput(dtype, r, collectiveInputElements(cop, count, n)));
      checked.push_back(knownAnswerInput(dtype, r, collectiveInputElements(cop, count, n), 1));
    }
    CollLaunch ours = [&](const std::vector<const void*>& sb, const std::vector<void*>& rb) {
      return comm.value()->run(cop, sb, rb, count, dtype, rop, o.root, streams);
    };
    auto algo = comm.value()->algorithmFor(cop, shown);
    auto algoInPlace = comm.value()->algorithmFor(cop, shown, true);
    const bool sameAlgo = algo.isOk() && algoInPlace.isOk() && algo.value() == algoInPlace.value();
    inPlaceDiffers = inPlaceDiffers || !sameAlgo;
    CollBuffers oop = collBuffers(ranks.value(), cop, count, dtype, false);
    CollBuffers inp = collBuffers(ranks.value(), cop, count, dtype, true);
    Measured mine = measure(ranks.value(), ours, oop, o, cop, dtype, rop, count, inputs, checked);
    if (mine.error.empty()) {
      if (Status st = comm.value()->checkBarriers(); !st.isOk()) return reportError(st);
    }
    // In place: one operation on fresh inputs is checked (repeating it would reduce the
    // result again), then the back-to-back operations are timed.
    Measured mineInPlace;
    Status once = uploadInputs(ranks.value(), inp, checked);
    if (once.isOk()) once = ours(inp.send, inp.recv);
    if (once.isOk()) once = syncRanks(ranks.value());
    if (once.isOk() && o.check) {
      auto w = countWrong(ranks.value(), inp, cop, dtype, rop, o.root, count, checked);
      if (w.isOk())
        mineInPlace.wrong = w.value();
      else
        once = w.status();
    }
    if (once.isOk()) {
      auto t = timeCollective(ranks.value(), ours, inp, o.warmup, o.iters, o.graphLaunches);
      if (t.isOk())
        mineInPlace.seconds = t.value();
      else
        once = t.status();
    }
    if (!once.isOk()) mineInPlace.error = once.message();
    nlohmann::json row = {{"bytes", shown},
                          {"count", count},
                          {"algo", algo.isOk() ? collAlgoName(algo.value()) : "?"},
                          {"inplace_algo", algoInPlace.isOk() ? collAlgoName(algoInPlace.value()) : "?"},
                          {"baselines", nlohmann::json::object()}};
    std::string line =
        fmt::format("  {:>11} {:>11} {:>8} {:>6} {:>4} {:>7} |", shown, count, dataTypeName(dtype),
                    collOpReduces(cop) ? redOpName(rop) : "none", withRoot ? o.root : -1,
                    fmt::format("{}{}", algo.isOk() ? collAlgoName(algo.value()) : "?", sameAlgo ? "" : "*"));
    Bandwidth bw = collectiveBandwidth(cop, shown, mine.seconds, n);
    if (mine.error.empty()) {
      line += fmt::format(" {:>9.2f} {:>7.2f} {:>7.2f} {:>6} |", mine.seconds * 1e6, bw.algbw, bw.busbw, mine.wrong);
      row["us"] = mine.seconds * 1e6;
      row["algbw"] = bw.algbw;
      row["busbw"] = bw.busbw;
      row["wrong"] = mine.wrong;
    } else {
      line += fmt::format(" {:>33} |", "FAILED");
      row["error"] = mine.error;
    }
    if (mineInPlace.error.empty()) {
      line += fmt::format(" {:>9.2f} {:>6} |", mineInPlace.seconds * 1e6, mineInPlace.wrong);
      row["inplace_us"] = mineInPlace.seconds * 1e6;
      row["inplace_wrong"] = mineInPlace.wrong;
    } else {
      line += fmt::format(" {:>16} |", "FAILED");
      row["inplace_error"] = mineInPlace.error;
    }
    anyWrong = anyWrong || mine.wrong || mineInPlace.wrong;
    anyError = anyError || !mine.error.empty() || !mineInPlace.error.empty();
    std::vector<std::string> rowNotes;
    if (!mine.error.empty()) rowNotes.push_back("gpupeer: " + mine.error);
    if (!mineInPlace.error.empty()) rowNotes.push_back("gpupeer in place: " + mineInPlace.error);
    for (const Baseline& bl : baselines) {
      CollLaunch theirs = [&](const std::vector<const void*>& sb, const std::vector<void*>& rb) {
        return nccl->run(cop, sb, rb, count, dtype, rop, o.root, streams);
      };
      CollBuffers bb = collBuffers(*bl.ranks, cop, count, dtype, false);
      Measured m = measure(*bl.ranks, theirs, bb, o, cop, dtype, rop, count, inputs, checked);
      if (m.error.empty()) {
        Bandwidth nb = collectiveBandwidth(cop, shown, m.seconds, n);
        line += fmt::format(" {:>14.2f} {:>7.2f} {:>6} {:>6.2f}x |", m.seconds * 1e6, nb.busbw, m.wrong,
                            mine.error.empty() && mine.seconds > 0 ? m.seconds / mine.seconds : 0.0);
        row["baselines"][bl.name] = {{"us", m.seconds * 1e6}, {"busbw", nb.busbw}, {"wrong", m.wrong}};
      } else {
        line += fmt::format(" {:>38} |", "FAILED");
        rowNotes.push_back(bl.name + ": " + m.error);
        row["baselines"][bl.name] = {{"error", m.error}};
      }
    }
    if (!o.json) {
      fmt::print("{}\n", line);
      for (const std::string& note : rowNotes) fmt::print("#   {}\n", note);
      std::fflush(stdout);
    }
    doc["rows"].push_back(row);
    progress.done(formatBytes(bytes));
  }
  if (inPlaceDiffers && !o.json)
    fmt::print(
        "# *: in place took the table's next choice (the pull kernel cannot serve an in-place {}); the JSON "
        "document has it per row (inplace_algo)\n",
        collOpName(cop));
  const std::string document = o.json || !o.output.empty() ? dumpJson(doc, 1) + "\n" : std::string();
  if (o.json) fmt::print("{}", document);
  if (!o.output.empty()) {
    Status written = writeOutputFile(o.output, document);
    if (!written.isOk()) {
      fmt::print(stderr, "gpupeer coll: {}\n", terminalSafe(written.message()));
      anyError = true;
    }
  }
  nccl.reset();  // windows released before the streams go
  freeRanks(ranks.value());
  if (anyError) return kExitError;
  return anyWrong ? kExitFailed : kExitOk;
}

// nccl-tests' -d TYPE and -o REDOP land on -d/--devices and -o/--output here: a data type or a
// reduction given to them is refused naming the option that takes it, rather than read as a
// device list or taken as the name of the file to write.
CLI::Validator notADataType() {
  return CLI::Validator(
      [](std::string& v) {
        if (!parseDataType(v).isOk()) return std::string();
        return fmt::format(
            "'{}' is a data type: -d/--devices takes GPU ordinals (e.g. 0,1); give the data type "
            "with --datatype {}",
            v, v);
      },
      "", "not a data type");
}

CLI::Validator notARedOp() {
  return CLI::Validator(
      [](std::string& v) {
        if (!parseRedOp(v).isOk()) return std::string();
        return fmt::format(
            "'{}' is a reduction: -o/--output names the JSON file to write; give the reduction with "
            "--op {} (a file of that name: ./{})",
            v, v, v);
      },
      "", "not a reduction");
}

// Words left over on the command line. With --json set they are the file that --json took
// before it became a flag, so the message names -o/--output.
int refuseExtras(const Options& o, const std::vector<std::string>& extras) {
  const std::string words = terminalSafe(fmt::format("{}", fmt::join(extras, " ")));
  if (o.json)
    fmt::print(stderr,
               "gpupeer coll: --json takes no file ('{}'): it prints the JSON document on standard output; write "
               "it to a file with -o/--output FILE\n",
               words);
  else
    fmt::print(stderr, "gpupeer coll: not expected: {} (see gpupeer coll --help)\n", words);
  return kExitUsage;
}

CommandRegistrar registrar("coll", 50, [](CLI::App& app, int& exitCode) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("coll",
                                     "Collectives over P2P in nccl-tests' table, every result checked against a host "
                                     "reference, with NCCL on the same buffers as the baseline");
  sub->add_option("op", opts->op,
                  "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall or sendrecv (default "
                  "all_reduce)");
  sub->add_option("-b,--minbytes", opts->begin, "smallest size (default 8)");
  sub->add_option("-e,--maxbytes", opts->end, "largest size (default 128M)");
  sub->add_option("-f,--stepfactor", opts->factor, "size factor (default 2)");
  sub->add_option("--datatype", opts->type,
                  "float (default), half, bfloat16, double, int8, uint8, int32, int64, f8e4m3, f8e5m2");
  sub->add_option("--op", opts->redop, "reduction: sum (default), prod, min, max, avg");
  sub->add_option("-r,--root", opts->root, "root rank of broadcast and reduce (default 0)");
  sub->add_option("-g,--ngpus", opts->gpus, "number of GPUs (default all)");
  sub->add_option("-d,--devices", opts->devices, "GPUs to use, e.g. 0,1")
      ->check(namesSomething("device"))
      ->check(notADataType());
  sub->add_option("-n,--iters", opts->iters, "operations timed back to back (default 20)");
  sub->add_option("-w,--warmup_iters", opts->warmup, "warm-up operations (default 5)");
  sub->add_option("-G,--cudagraph", opts->graphLaunches,
                  "capture the -n operations in one CUDA graph and replay it this many times (default 0: eager)");
  sub->add_option("-c,--check", opts->check, "check every result against the host reference (default 1)");
  sub->add_option("--baseline", opts->baseline,
                  "nccl: NCCL on the same streams (eager; with -G in graphs, and in graphs with symmetric windows)");
  sub->add_flag("--json", opts->json, "print the table as one JSON document instead (for scripts)");
  sub->add_flag("--progress", opts->progress,
                "a line per finished size on standard error (default: only where standard error is a terminal)");
  sub->add_option("-o,--output", opts->output,
                  "also write the table as JSON to this file (for scripts/plot_coll.py and gpupeer report)")
      ->check(nonEmptyFileName())
      ->check(notARedOp());
  sub->add_option("--procs", opts->procs,
                  "one process per rank (RankCommunicator), this many, each on GPU rank % visible GPUs; NCCL "
                  "baseline by ncclCommInitRank per process");
  sub->add_option("--slot", opts->slot,
                  "with --procs: each rank's one-shot slot (RankCommOptions::slotBytes; default 16M up to 4 "
                  "ranks, 4M from 5): larger messages go in pieces of it");
  sub->add_flag("--registered", opts->registered,
                "with --procs: register each rank's send and receive buffers (registerBuffer), so that "
                "all-reduce, all-gather, reduce-scatter, broadcast and reduce read and write the peers' buffers "
                "directly");
  sub->add_option("--zero-copy-from", opts->zeroCopyFrom,
                  "with --registered: the bytes per rank from which they do (RankCommOptions::zeroCopyFromBytes; "
                  "default: where measured faster, src/ranks/zero_copy_rules.hpp)");
  sub->add_flag("--tuning-variables", opts->tuningVariables,
                "print the GPUPEER_ variables that tune the communicators (a Markdown table: "
                "docs/collectives.md) and exit");
  sub->add_option("--proc-rank", opts->procRank)->group("");  // set by --procs for the ranks it starts
  sub->add_option("--proc-id", opts->procId)->group("");
  sub->footer(helpFooter(
      {"gpupeer coll all_reduce -b 8 -e 128M -f 2",
       "gpupeer coll all_gather -d 0,1 --datatype bfloat16 -G 10 "
       "--baseline nccl -o all_gather.json",
       "gpupeer coll reduce_scatter --procs 2 --op max --json > rs.json"},
      "0 every result right, 1 a wrong result, 2 bad input, 3 no GPU (or fewer than -g), 4 a failed run or an "
      "-o file that cannot be written"));
  sub->allow_extras();  // refused by refuseExtras, which can say what --json no longer takes
  sub->callback([opts, sub, &exitCode] {
    std::vector<std::string> extras = sub->remaining();
    // `coll --json out.json`: the file name landed on the operation's place.
    if (opts->json && !parseCollOp(opts->op).isOk() && opts->op.find_first_of("./") != std::string::npos)
      extras.insert(extras.begin(), opts->op);
    if (opts->tuningVariables && extras.empty()) {
      fmt::print("{}", tuningVariablesMarkdown());
      exitCode = 0;
      return;
    }
    exitCode = extras.empty() ? run(*opts) : refuseExtras(*opts, extras);
  });
});

}  // namespace
}  // namespace gpupeer::cli
