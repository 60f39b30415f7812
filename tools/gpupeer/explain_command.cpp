// gpupeer explain: which known failures a log shows, why they happen, what not to try, and
// what to run instead; and what pasted tool outputs (nvidia-smi topo/nvlink, nccl-tests, the
// CUDA P2P samples, NCCL_DEBUG=INFO logs) say about P2P, read in the same pass.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_common.hpp"
#include "gpupeer/explain.hpp"

namespace gpupeer::cli {
namespace {

struct Options {
  std::vector<std::string> text;  // words of the message, or "-" for stdin
  std::string file;               // --file LOG ("-" = stdin)
  std::string shortFile;          // -f LOG: refused, -f is the sweeps' size factor
  std::vector<std::string> kbDirs;
  bool json = false;
  std::size_t top = 5;
};

void warn(const std::string& message) { fmt::print(stderr, "gpupeer explain: warning: {}\n", terminalSafe(message)); }

int usage(const std::string& message) {
  fmt::print(stderr, "gpupeer explain: {}\n", terminalSafe(message));
  return kExitUsage;
}

Result<Explanation> explainInput(const Options& o, const KnowledgeBase& kb) {
  bool stdinText = o.text.size() == 1 && o.text[0] == "-";
  if (o.file == "-" || stdinText) return explainStream(kb, std::cin);
  if (!o.file.empty()) {
    std::ifstream in(o.file, std::ios::binary);
    if (!in)
      return GPUPEER_ERROR(ErrorCode::kNotFound, fmt::format("cannot open '{}': {}", o.file, std::strerror(errno)));
    return explainStream(kb, in);
  }
  std::string joined;
  for (const std::string& word : o.text) joined += (joined.empty() ? "" : " ") + word;
  return explainText(kb, joined);
}

int run(const Options& o) {
  if (!o.shortFile.empty())
    return usage(fmt::format("-f is the size factor of bench and coll sweeps; read a log with --file {}", o.shortFile));
  if (o.text.empty() && o.file.empty())
    return usage("give the error text, --file LOG, or - to read standard input (see --help)");
  if (!o.text.empty() && !o.file.empty()) return usage("give either the error text or --file LOG, not both");
  if (std::error_code ec; o.file != "-" && std::filesystem::is_directory(o.file, ec))
    return usage(fmt::format("'{}' is a folder; give a log file", o.file));

  // The built-in KB and GPUPEER_KB_PATH's folders that exist (a stale entry in the variable is
  // a warning, not a failure); every --kb folder must exist.
  std::vector<std::string> skipped;
  std::vector<std::string> dirs = KnowledgeBase::existingDefaultDirectories(&skipped);
  for (const std::string& w : skipped) warn(w);
  dirs.insert(dirs.end(), o.kbDirs.begin(), o.kbDirs.end());
  std::vector<std::string> warnings;
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories(dirs, &warnings);
  for (const std::string& w : warnings) warn(w);
  if (!kb.isOk()) return usage(kb.status().message());
  if (kb.value().size() == 0) warn("the knowledge base is empty: nothing can match");
  Result<Explanation> e = explainInput(o, kb.value());
  if (!e.isOk()) {
    if (e.status().code() == ErrorCode::kNotFound) return usage(e.status().message());
    fmt::print(stderr, "gpupeer explain: {}\n", terminalSafe(e.status().message()));
    return kExitError;
  }
  if (o.json)
    fmt::print("{}", explanationToJson(e.value(), o.top));
  else
    printTerminal(renderExplanationText(e.value(), o.top));  // log lines and KB files may hold escapes
  return e.value().found() ? kExitOk : kExitFailed;
}

CommandRegistrar registrar("explain", 60, [](CLI::App& app, int& exitCode) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("explain",
                         "Explain an error message or a log: the known failure, its cause, what not to try, what "
                         "to run; also reads pasted nvidia-smi topo/nvlink, dcgmi, nccl-tests, simpleP2P, "
                         "p2pBandwidthLatencyTest and NCCL_DEBUG=INFO output. Exit 0 when something matched or was "
                         "recognised, 1 when nothing was");
  sub->add_option("text", opts->text, "the error message (several words are joined), or - for stdin");
  sub->add_option("--file", opts->file, "read this log file (- for stdin); any size, streamed")->type_name("LOG");
  sub->add_option("-f", opts->shortFile)->group("");  // -f means the size factor in every subcommand
  sub->add_option("--kb", opts->kbDirs, "also load KB entries (*.json) from this directory; repeatable")
      ->allow_extra_args(false)
      ->type_name("DIR");
  sub->add_flag("--json", opts->json, "JSON output for scripts");
  sub->add_option("--top", opts->top, "show at most N matches, best first (0 = all; default 5)")
      ->check(CLI::Range(0, 1000000))
      ->type_name("N");
  sub->footer(
      "Examples:\n"
      "  gpupeer explain \"CUDA error: peer access is not supported between these two devices\"\n"
      "  gpupeer explain --file train.log\n"
      "  NCCL_DEBUG=WARN torchrun ... 2>&1 | gpupeer explain -\n"
      "  nvidia-smi topo -p2p r | gpupeer explain -\n"
      "  NCCL_DEBUG=INFO ./all_reduce_perf -g 8 2>&1 | gpupeer explain -\n"
      "The KB is the built-in one plus each directory of GPUPEER_KB_PATH (colon-separated) and --kb.\n"
      "Exit codes: 0 something matched or was recognised, 1 nothing was, 2 bad input, 4 error.");
  sub->callback([opts, &exitCode] { exitCode = run(*opts); });
});

}  // namespace
}  // namespace gpupeer::cli
