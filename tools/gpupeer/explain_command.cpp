// gpupeer explain: which known failures a log shows, why they happen, what not to try, and
// what to run instead.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_common.hpp"
#include "gpupeer/kb.hpp"

namespace gpupeer::cli {
namespace {

struct Options {
  std::vector<std::string> text;  // words of the message, or "-" for stdin
  std::string file;               // -f LOG ("-" = stdin)
  std::vector<std::string> kbDirs;
  bool json = false;
  std::size_t top = 5;
};

void warn(const std::string& message) { fmt::print(stderr, "gpupeer explain: warning: {}\n", terminalSafe(message)); }

int usage(const std::string& message) {
  fmt::print(stderr, "gpupeer explain: {}\n", terminalSafe(message));
  return kExitUsage;
}

Result<KbScan> scanInput(const Options& o, const KbMatcher& matcher) {
  bool stdinText = o.text.size() == 1 && o.text[0] == "-";
  if (o.file == "-" || stdinText) return matcher.scan(std::cin);
  if (!o.file.empty()) {
    std::ifstream in(o.file, std::ios::binary);
    if (!in)
      return GPUPEER_ERROR(ErrorCode::kNotFound, fmt::format("cannot open '{}': {}", o.file, std::strerror(errno)));
    return matcher.scan(in);
  }
  std::string joined;
  for (const std::string& word : o.text) joined += (joined.empty() ? "" : " ") + word;
  return matcher.scanText(joined);
}

int run(const Options& o) {
  if (o.text.empty() && o.file.empty())
    return usage("give the error text, -f LOG, or - to read standard input (see --help)");
  if (!o.text.empty() && !o.file.empty()) return usage("give either the error text or -f LOG, not both");

  // The built-in KB and GPUPEER_KB_PATH's folders that exist (a stale entry in the variable is
  // a warning, not a failure); every --kb folder must exist.
  std::vector<std::string> dirs;
  for (const std::string& d : KnowledgeBase::defaultDirectories()) {
    std::error_code ec;
    if (std::filesystem::is_directory(d, ec))
      dirs.push_back(d);
    else
      warn(fmt::format("KB directory '{}' (GPUPEER_KB_PATH) does not exist or is not a directory; skipped", d));
  }
  dirs.insert(dirs.end(), o.kbDirs.begin(), o.kbDirs.end());
  std::vector<std::string> warnings;
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories(dirs, &warnings);
  for (const std::string& w : warnings) warn(w);
  if (!kb.isOk()) return usage(kb.status().message());
  if (kb.value().size() == 0) warn("the knowledge base is empty: nothing can match");
  Result<KbMatcher> matcher = KbMatcher::build(kb.value());
  if (!matcher.isOk()) return reportError(matcher.status());

  Result<KbScan> scan = scanInput(o, matcher.value());
  if (!scan.isOk()) {
    if (scan.status().code() == ErrorCode::kNotFound) return usage(scan.status().message());
    fmt::print(stderr, "gpupeer explain: {}\n", scan.status().message());
    return kExitError;
  }
  const KbScan& s = scan.value();
  if (o.json) {
    fmt::print("{}", kbScanToJson(s, o.top));
  } else if (s.matches.empty()) {
    fmt::print("No known failure matched the {} line{} read ({} entries in the knowledge base).\n", s.linesRead,
               s.linesRead == 1 ? "" : "s", kb.value().size());
  } else {
    printTerminal(renderKbScanText(s, o.top));  // log lines and KB files may hold escapes
  }
  return s.matches.empty() ? kExitFailed : kExitOk;
}

CommandRegistrar registrar("explain", 60, [](CLI::App& app, int& exitCode) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub =
      app.add_subcommand("explain",
                         "Explain an error message or a log: the known failure, its cause, what not to try, what "
                         "to run. Exit 0 when something matched, 1 when nothing did");
  sub->add_option("text", opts->text, "the error message (several words are joined), or - for stdin");
  sub->add_option("-f,--file", opts->file, "read this log file (- for stdin); any size, streamed")->type_name("LOG");
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
      "  gpupeer explain -f train.log\n"
      "  NCCL_DEBUG=WARN torchrun ... 2>&1 | gpupeer explain -\n"
      "The KB is the built-in one plus each directory of GPUPEER_KB_PATH (colon-separated) and --kb.");
  sub->callback([opts, &exitCode] { exitCode = run(*opts); });
});

}  // namespace
}  // namespace gpupeer::cli
