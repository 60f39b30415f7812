// gpupeer bench: bandwidth and latency matrices, and size sweeps, as % of the link's limit.
#include <fmt/format.h>

#include <sstream>

#include "cli_common.hpp"
#include "core/sweep_progress.hpp"
#include "gpupeer/bench.hpp"
#include "gpupeer/peer_check.hpp"

namespace gpupeer::cli {
namespace {

struct Options {
  std::string testcases;
  std::string size = "512M";
  int samples = 3;
  int copies = 8;
  int smBlocksPerSm = 2;
  bool noVerify = false;
  std::string smKernel = "vector";
  std::string path = "auto";
  std::string stagingChunk = "8M";
  std::string devices;
  bool json = false, csv = false, list = false, sweep = false, progress = false;
  std::string begin = "8", end = "1G", pair = "0,1";
  double factor = 2;
};

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

void emit(const Options& o, const BenchResult& r, const Snapshot& s, bool& csvHeader, bool sweep) {
  if (o.json)
    fmt::print("{}", benchToJsonLine(r, s));
  else if (o.csv) {
    fmt::print("{}", benchToCsv(r, csvHeader));
    csvHeader = false;
  } else
    fmt::print("{}\n", sweep ? renderSweepText(r) : renderBenchText(r, static_cast<int>(s.gpus.size())));
  std::fflush(stdout);
}

// runSweep one size at a time, so that the progress line can say which size is done; the
// result is the one runSweep gives for all of them.
BenchResult sweepBySize(const Snapshot& s, const BenchOptions& options, const std::string& key, int src, int dst,
                        const std::vector<std::size_t>& sizes, SweepProgress& progress) {
  BenchResult all;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    BenchResult one = runSweep(s, options, key, src, dst, {sizes[i]});
    if (!one.waived.empty() || !one.error.empty()) return one;
    if (i == 0)
      all = std::move(one);
    else
      all.cells.insert(all.cells.end(), one.cells.begin(), one.cells.end());
    progress.done(fmt::format("{} {}", key, formatBytes(sizes[i])));
  }
  return all;
}

int run(const Options& o) {
  if (o.list) {
    for (const BenchTestcase& t : benchTestcases()) fmt::print("{:<18} {}\n", t.key, t.description);
    return kExitOk;
  }
  if (o.samples < 1 || o.copies < 1 || o.copies > 64 || o.smBlocksPerSm < 1 || o.smBlocksPerSm > 32) {
    fmt::print(stderr, "gpupeer bench: -i must be >= 1, --copies 1..64, --sm-blocks-per-sm 1..32\n");
    return kExitUsage;
  }
  Result<std::size_t> bytes = parseByteSize(o.size);
  if (!bytes.isOk()) return reportError(bytes.status());
  if (bytes.value() == 0) {
    fmt::print(stderr, "gpupeer bench: -s 0: a transfer needs at least one byte\n");
    return kExitUsage;
  }
  BenchOptions options;
  options.bytes = bytes.value();
  options.samples = o.samples;
  options.copiesPerSample = o.copies;
  options.verify = !o.noVerify;
  options.smBlocksPerSm = o.smBlocksPerSm;
  if (o.smKernel != "vector" && o.smKernel != "bulk") {
    fmt::print(stderr, "gpupeer bench: --sm-kernel takes vector or bulk, not '{}'\n", terminalSafe(o.smKernel));
    return kExitUsage;
  }
  options.smBulk = o.smKernel == "bulk";
  bool allPaths = o.path == "all";
  if (!allPaths) {
    auto path = parsePath(o.path);
    if (!path.isOk()) return reportError(path.status());
    options.path = path.value();
  }
  auto chunk = parseByteSize(o.stagingChunk);
  if (!chunk.isOk()) return reportError(chunk.status());
  if (chunk.value() < 4096) {
    fmt::print(stderr, "gpupeer bench: --staging-chunk must be at least 4K\n");
    return kExitUsage;
  }
  options.stagingChunkBytes = chunk.value();
  // Every option is checked before the machine is touched; device numbers against the
  // number of GPUs after.
  if (!o.devices.empty())
    if (auto list = parseDeviceList(o.devices, kAnyDeviceCount); !list.isOk()) return reportError(list.status());
  std::vector<std::size_t> sweepSizeList;
  if (o.sweep) {
    auto pair = parseDeviceList(o.pair, kAnyDeviceCount);
    if (!pair.isOk()) return reportError(pair.status());
    if (pair.value().size() != 2) {
      fmt::print(stderr, "gpupeer bench: --pair takes two devices, e.g. 0,1\n");
      return kExitUsage;
    }
    auto b = parseByteSize(o.begin), e = parseByteSize(o.end);
    if (!b.isOk()) return reportError(b.status());
    if (!e.isOk()) return reportError(e.status());
    auto sizes = sweepSizes(b.value(), e.value(), o.factor);
    if (!sizes.isOk()) return reportError(sizes.status());
    sweepSizeList = sizes.value();
    for (const std::string& key : splitList(o.testcases))
      if (Status st = checkSweepTestcase(key); !st.isOk()) return reportError(st);
  } else {
    for (const std::string& key : splitList(o.testcases))
      if (!findBenchTestcase(key)) {
        fmt::print(stderr, "gpupeer bench: unknown testcase '{}' (see --list)\n", terminalSafe(key));
        return kExitUsage;
      }
  }
  Snapshot s = probeMachine();
  if (s.gpus.empty()) {
    fmt::print(stderr, "gpupeer bench: no NVIDIA GPU visible: {}\n", terminalSafe(whyNoGpu(s)));
    return kExitNotApplicable;
  }
  if (!o.devices.empty()) {
    auto list = parseDeviceList(o.devices, static_cast<int>(s.gpus.size()));
    if (!list.isOk()) return reportError(list.status());
    options.devices = list.value();
  }
  if (options.bytes % 16)
    fmt::print(stderr,
               "gpupeer bench: note: {} bytes is not a multiple of 16; SM copies move the last {} byte(s) "
               "separately\n",
               options.bytes, options.bytes % 16);
  bool csvHeader = true;
  bool anyFailed = false;
  if (o.sweep) {
    auto pair = parseDeviceList(o.pair, static_cast<int>(s.gpus.size()));
    if (!pair.isOk()) return reportError(pair.status());
    if (pair.value().size() != 2) {
      fmt::print(stderr, "gpupeer bench: --pair takes two devices, e.g. 0,1\n");
      return kExitUsage;
    }
    const std::vector<std::size_t>& sizes = sweepSizeList;
    if (allPaths) {
      // The copy API on each path, side by side.
      std::vector<BenchResult> sweeps;
      SweepProgress progress("gpupeer bench --sweep", 3 * sizes.size(), o.progress);
      for (Path p : {Path::kCopyEngine, Path::kKernel, Path::kStaged}) {
        options.path = p;
        sweeps.push_back(sweepBySize(s, options, "copy", pair.value()[0], pair.value()[1], sizes, progress));
        if (o.json) fmt::print("{}", benchToJsonLine(sweeps.back(), s));
      }
      if (!o.json) fmt::print("{}", renderSweepsSideBySide(sweeps));
      return kExitOk;
    }
    std::vector<std::string> keys =
        o.testcases.empty() ? std::vector<std::string>{"ce_write", "sm_write"} : splitList(o.testcases);
    SweepProgress progress("gpupeer bench --sweep", keys.size() * sizes.size(), o.progress);
    for (const std::string& key : keys) {
      BenchResult r = sweepBySize(s, options, key, pair.value()[0], pair.value()[1], sizes, progress);
      anyFailed |= !r.error.empty();
      emit(o, r, s, csvHeader, true);
    }
    return anyFailed ? kExitFailed : kExitOk;
  }
  std::vector<std::string> keys;
  if (o.testcases.empty())
    for (const BenchTestcase& t : benchTestcases()) keys.push_back(t.key);
  else
    keys = splitList(o.testcases);
  SweepProgress progress("gpupeer bench", keys.size(), o.progress);
  for (const std::string& key : keys) {
    const BenchTestcase* t = findBenchTestcase(key);
    if (!t) {
      fmt::print(stderr, "gpupeer bench: unknown testcase '{}' (see --list); going on with the others\n",
                 terminalSafe(key));
      anyFailed = true;
      continue;
    }
    BenchResult r = t->run(s, options);
    for (const BenchCell& c : r.cells) anyFailed |= c.note.rfind("FAIL", 0) == 0;
    emit(o, r, s, csvHeader, false);
    progress.done(key);
  }
  return anyFailed ? kExitFailed : kExitOk;
}

CommandRegistrar registrar("bench", 40, [](CLI::App& app, int& exitCode) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("bench", "Bandwidth and latency matrices and size sweeps (% of the link's limit)");
  sub->add_option("-t,--testcase", opts->testcases, "comma-separated testcases (default: all; see --list)")
      ->check(namesSomething("testcase"));
  sub->add_option("-s,--size", opts->size, "bytes per copy, e.g. 512M (default), 1G, 4096");
  sub->add_option("-i,--samples", opts->samples, "timed samples; the median is reported (default 3)");
  sub->add_option("--copies", opts->copies, "copies per timed sample (default 8)");
  sub->add_option("--sm-blocks-per-sm", opts->smBlocksPerSm, "SM copy kernel blocks of 512 threads per SM (default 2)");
  sub->add_option("--sm-kernel", opts->smKernel,
                  "SM copy kernel: vector (16-byte loads/stores) or bulk (Hopper bulk copies)");
  sub->add_option("--path", opts->path,
                  "path of the copy testcase and copy sweep: auto, ce, kernel, staged (all: sweep side by side)");
  sub->add_option("--staging-chunk", opts->stagingChunk, "chunk of the host-staged pipeline (default 8M)");
  sub->add_flag("--no-verify", opts->noVerify, "skip the data check after timing");
  sub->add_option("-d,--devices", opts->devices, "GPUs to use, e.g. 0,1")->check(namesSomething("device"));
  CLI::Option* json = sub->add_flag("--json", opts->json, "one JSON line per testcase");
  sub->add_flag("--csv", opts->csv, "CSV rows")->excludes(json);
  sub->add_flag("--list", opts->list, "list the testcases");
  sub->add_flag("--progress", opts->progress,
                "a line per finished testcase (sweeps: per size) on standard error (default: only where standard "
                "error is a terminal)");
  sub->add_flag("--sweep", opts->sweep, "bandwidth against size for one pair (-b, -e, -f, --pair, -t)");
  // Sweep options without --sweep would be ignored without a word: refused instead.
  std::vector<CLI::Option*> sweepOnly = {
      sub->add_option("-b,--minbytes", opts->begin, "sweep start size (default 8)"),
      sub->add_option("-e,--maxbytes", opts->end, "sweep end size (default 1G)"),
      sub->add_option("-f,--stepfactor", opts->factor, "sweep size factor (default 2)"),
      sub->add_option("--pair", opts->pair, "sweep pair src,dst (default 0,1)")->check(namesSomething("device"))};
  sub->footer(helpFooter({"gpupeer bench -t ce_write -i 5", "gpupeer bench -d 0,1 --json > bench.jsonl",
                          "gpupeer bench --sweep -b 8 -e 1G -f 2 --pair 0,1 -t ce_write,sm_write --progress"},
                         "0 ok, 1 a failed cell or sweep, 2 bad input, 3 no GPU, 4 error"));
  sub->callback([opts, sweepOnly, &exitCode] {
    for (const CLI::Option* option : sweepOnly)
      if (!opts->sweep && option->count() > 0) {
        fmt::print(stderr, "gpupeer bench: {} applies to --sweep\n", option->get_name());
        exitCode = kExitUsage;
        return;
      }
    exitCode = run(*opts);
  });
});

}  // namespace
}  // namespace gpupeer::cli
