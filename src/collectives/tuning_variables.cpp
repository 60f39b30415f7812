#include "collectives/tuning_variables.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "collectives/kernel_limits.hpp"
#include "collectives/line_grid.hpp"
#include "gpupeer/bench.hpp"

namespace gpupeer {
namespace {

using Options = CommunicatorOptions;

Status badWord(std::string_view name, std::string_view word, std::string_view words) {
  return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("{}={}: give {}", name, word, words));
}

Status setAlgorithm(std::string_view word, Options& o) {
  o.algorithm = word;  // checked by create(), with the operations each algorithm serves
  return Status::ok();
}
std::string showAlgorithm(const Options& o) { return o.algorithm.empty() ? "the table's choice" : o.algorithm; }

// Any value but 0 disables P2P, as NCCL_P2P_DISABLE does; 0 leaves the other variable's say.
Status setDisableP2p(std::string_view word, Options& o) {
  if (word != "0") o.disableP2p = true;
  return Status::ok();
}
std::string showDisableP2p(const Options& o) { return o.disableP2p ? "1" : "0 (P2P where the GPUs have it)"; }

Status setStaging(std::string_view word, Options& o) {
  if (word != "pipeline" && word != "cuda") return badWord("GPUPEER_STAGING", word, "pipeline or cuda");
  o.stagedPipeline = word == "pipeline";
  return Status::ok();
}
std::string showStaging(const Options& o) { return o.stagedPipeline ? "pipeline" : "cuda"; }

Status setLaunchThreads(std::string_view word, Options& o) {
  if (word != "0" && word != "1") return badWord("GPUPEER_LAUNCH_THREADS", word, "1 or 0");
  o.launchThreads = word == "1";
  return Status::ok();
}
std::string showLaunchThreads(const Options& o) { return o.launchThreads ? "1" : "0"; }

Status setCeIssue(std::string_view word, Options& o) {
  if (word != "sender" && word != "receiver") return badWord("GPUPEER_CE_ISSUE", word, "sender or receiver");
  o.ceIssue = word == "sender" ? Options::CeIssue::kSender : Options::CeIssue::kReceiver;
  return Status::ok();
}
std::string showCeIssue(const Options& o) {
  switch (o.ceIssue) {
    case Options::CeIssue::kSender: return "sender";
    case Options::CeIssue::kReceiver: return "receiver";
    case Options::CeIssue::kByRule: break;
  }
  return "receiver on 2 GPUs, sender from 3";
}

constexpr std::size_t kByRule = Options::kByRule;
constexpr std::size_t kMaxBlocks = static_cast<std::size_t>(kMaxOneShotBlocks);
constexpr std::size_t kMaxLines = static_cast<std::size_t>(kMaxLineBlockLines);

// clang-format off
const TuningVariable kVariables[] = {
    {.name = "GPUPEER_ALGO", .option = "algorithm",
     .doc = "forces an algorithm on every operation it can serve (one process per GPU: oneshot, twoshot, chain, "
            "relay, and ce for all-reduce, reduce-scatter and reduce)",
     .words = "oneshot, twoshot, pull, split, chain, relay, ce, ring", .setWord = setAlgorithm, .show = showAlgorithm,
     .perRankToo = true},
    {.name = "GPUPEER_P2P_DISABLE", .option = "disableP2p",
     .doc = "stages every copy through host memory, as between GPUs without P2P",
     .alias = "NCCL_P2P_DISABLE", .words = "1 (anything but 0)", .setWord = setDisableP2p, .show = showDisableP2p},
    {.name = "GPUPEER_STAGING", .option = "stagedPipeline",
     .doc = "without P2P, cuda sends every copy through CUDA's own staging: slower, but it pins no host memory",
     .words = "pipeline, cuda", .setWord = setStaging, .show = showStaging},
    {.name = "GPUPEER_LAUNCH_THREADS", .option = "launchThreads",
     .doc = "0 launches every rank's kernels from the calling thread instead of a thread per rank",
     .words = "1, 0", .setWord = setLaunchThreads, .show = showLaunchThreads},
    {.name = "GPUPEER_ONESHOT_SLOT", .option = "oneShotSlotBytes",
     .doc = "one-shot scratch: 2 x ranks slots of this size per GPU; larger messages go in pieces",
     .bytes = &Options::oneShotSlotBytes, .min = 4u << 10, .multiple = 256},
    {.name = "GPUPEER_CE_SLOT", .option = "ceSlotBytes",
     .doc = "copy-engine scratch: ranks slots of this size per GPU",
     .bytes = &Options::ceSlotBytes, .min = 1u << 20, .multiple = 4096},
    {.name = "GPUPEER_RING_CHUNK", .option = "ringChunkBytes",
     .doc = "the ring's chunks for broadcast and reduce",
     .bytes = &Options::ringChunkBytes, .min = 4u << 10},
    {.name = "GPUPEER_RING_SPREAD_CHUNK", .option = "ringSpreadChunkBytes",
     .doc = "the ring's smallest chunks for all-gather, reduce-scatter and all-reduce",
     .bytes = &Options::ringSpreadChunkBytes, .min = 4u << 10},
    {.name = "GPUPEER_CHAIN_STEP", .option = "chainStepBytes",
     .doc = "the chain kernel's step per block for broadcast",
     .bytes = &Options::chainStepBytes, .min = 16, .multiple = 16, .perRankToo = true},
    {.name = "GPUPEER_CHAIN_REDUCE_STEP", .option = "chainReduceStepBytes",
     .doc = "the chain kernel's step per block for reduce",
     .bytes = &Options::chainReduceStepBytes, .min = 16, .multiple = 16, .perRankToo = true},
    {.name = "GPUPEER_CE_ISSUE", .option = "ceIssue",
     .doc = "whose copy engines carry the copy-engine algorithm's plain copies",
     .words = "sender, receiver", .setWord = setCeIssue, .show = showCeIssue},
    {.name = "GPUPEER_ONESHOT_BLOCKS", .option = "oneShotBlocks",
     .doc = "the one-shot kernel's most blocks",
     .count = &Options::oneShotBlocks, .min = 1, .max = kMaxBlocks, .rule = 0, .ruleMeans = "the launch's rule",
     .perRankToo = true},
    {.name = "GPUPEER_ONESHOT_STEP", .option = "oneShotStepBytes",
     .doc = "the one-shot and relay kernels' step between flags above 1 MiB",
     .bytes = &Options::oneShotStepBytes, .rule = 0, .ruleMeans = "16 KiB from 3 ranks across processes, else the kernel's 32 KiB",
     .perRankToo = true},
    {.name = "GPUPEER_LL_SLOT", .option = "lineSlotBytes",
     .doc = "each slot of the 16-byte lines; pieces up to half of it go in lines",
     .bytes = &Options::lineSlotBytes, .min = 4u << 10, .multiple = 4096},
    {.name = "GPUPEER_LL_BLOCK_LINES", .option = "lineBlockLines",
     .doc = "lines per block of the 16-byte lines",
     .count = &Options::lineBlockLines, .min = 32, .max = kMaxLines, .multiple = 32, .rule = 0,
     .ruleMeans = "the launch's rule", .perRankToo = true},
    {.name = "GPUPEER_LL128_SLOT", .option = "line128SlotBytes",
     .doc = "each slot of the 128-byte lines (0: none), used where NVLink joins every pair",
     .bytes = &Options::line128SlotBytes, .multiple = 4096, .rule = kByRule,
     .ruleMeans = "18 MiB on 2 GPUs, 2 MiB from 3"},
    {.name = "GPUPEER_LL128_FROM", .option = "line128FromBytes",
     .doc = "the smallest piece that takes the 128-byte lines",
     .bytes = &Options::line128FromBytes, .rule = kByRule, .ruleMeans = "0 on 2 GPUs, 64 KiB from 3"},
    {.name = "GPUPEER_PULL_BLOCK", .option = "pullBlockBytes",
     .doc = "the pull and split kernels' grid: a block per this much of a part",
     .bytes = &Options::pullBlockBytes, .min = 1u << 10, .rule = 0, .ruleMeans = "collectives/pull_plan.hpp's rule",
     .perRankToo = true},
    {.name = "GPUPEER_PULL_TILE", .option = "pullTileBytes",
     .doc = "the pull and split kernels' tiles, dealt to the blocks in turn (0: one range per block)",
     .bytes = &Options::pullTileBytes, .multiple = 16, .rule = kByRule, .ruleMeans = "collectives/pull_plan.hpp's rule",
     .perRankToo = true},
};
// clang-format on

bool isNumeric(const TuningVariable& v) { return v.bytes || v.count; }

std::size_t valueOf(const TuningVariable& v, const Options& o) {
  return v.bytes ? o.*v.bytes : static_cast<std::size_t>(o.*v.count);
}

bool inRange(const TuningVariable& v, std::size_t value) {
  return value >= v.min && value <= v.max && value % v.multiple == 0;
}

std::string amount(const TuningVariable& v, std::size_t value) {
  return v.bytes ? formatBytes(value) : std::to_string(value);
}

// "at least 4 KiB, a multiple of 256 B", "32 to 512, a multiple of 32", "any".
std::string rangeText(const TuningVariable& v) {
  std::string text;
  if (v.max != TuningVariable::kNoLimit)
    text = fmt::format("{} to {}", amount(v, v.min), amount(v, v.max));
  else if (v.min > 0)
    text = fmt::format("at least {}", amount(v, v.min));
  if (v.multiple > 1) text += fmt::format("{}a multiple of {}", text.empty() ? "" : ", ", amount(v, v.multiple));
  return text.empty() ? "any" : text;
}

}  // namespace

std::span<const TuningVariable> tuningVariables() { return kVariables; }

Status applyTuningText(const TuningVariable& v, std::string_view text, CommunicatorOptions& o) {
  if (!isNumeric(v)) return v.setWord(text, o);
  Result<std::size_t> parsed = parseByteSize(std::string(text));
  if (!parsed.isOk() || !inRange(v, parsed.value()))
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("{}={}: give {}{}", v.name, text, rangeText(v),
                                     parsed.isOk() ? "" : " (" + parsed.status().message() + ")"));
  if (v.bytes)
    o.*v.bytes = parsed.value();
  else
    o.*v.count = static_cast<int>(parsed.value());
  return Status::ok();
}

Status checkTuningRanges(const CommunicatorOptions& o) {
  for (const TuningVariable& v : kVariables) {
    if (!isNumeric(v)) continue;
    const bool negative = v.count && o.*v.count < 0;
    const std::size_t value = valueOf(v, o);
    if (!negative && (value == v.rule || inRange(v, value))) continue;
    return GPUPEER_ERROR(
        ErrorCode::kInvalidArgument,
        fmt::format("CommunicatorOptions::{} = {}: give {} ({})", v.option,
                    v.count ? std::to_string(o.*v.count) : std::to_string(value), rangeText(v), v.name));
  }
  return Status::ok();
}

Result<CommunicatorOptions> CommunicatorOptions::fromEnvironment() {
  CommunicatorOptions o;
  for (const TuningVariable& v : kVariables)
    for (const char* name : {v.name, v.alias}) {
      const char* text = name ? std::getenv(name) : nullptr;
      if (text && *text) GPUPEER_RETURN_IF_ERROR(applyTuningText(v, text, o));
    }
  return o;
}

RankTuning rankTuningOf(const CommunicatorOptions& o) {
  RankTuning values;
  for (const TuningVariable& v : kVariables) {
    if (!v.perRankToo) continue;
    if (!isNumeric(v)) {
      values[v.name] = v.show(o);
      continue;
    }
    // Exact numbers, so that two values never read alike; a field at its rule says so.
    const std::size_t value = valueOf(v, o);
    values[v.name] = value == v.rule ? "not set" : std::to_string(value);
  }
  return values;
}

void applyRankTuning(const CommunicatorOptions& from, CommunicatorOptions& to) {
  for (const TuningVariable& v : kVariables) {
    if (!v.perRankToo) continue;
    if (v.bytes) to.*v.bytes = from.*v.bytes;
    if (v.count) to.*v.count = from.*v.count;
  }
}

Status sameRankTuning(const RankTuning& mine, int rank, const RankTuning& theirs, int other) {
  for (const auto& [name, value] : mine) {
    auto it = theirs.find(name);
    const std::string given = it == theirs.end() ? "not known" : it->second;
    if (given != value)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("{} is {} on rank {} and {} on rank {}: every rank of a communicator must be "
                                       "given the same value (the ranks' kernels must match)",
                                       name, given, other, value, rank));
  }
  return Status::ok();
}

std::string tuningVariablesMarkdown() {
  const CommunicatorOptions defaults;
  std::string out =
      "| variable | option | default | values | one process per GPU | what it sets |\n"
      "| --- | --- | --- | --- | --- | --- |\n";
  for (const TuningVariable& v : kVariables) {
    std::string name = fmt::format("`{}`", v.name);
    if (v.alias) name += fmt::format(" (or `{}`)", v.alias);
    std::string shown, values;
    if (isNumeric(v)) {
      const std::size_t value = valueOf(v, defaults);
      shown = value == v.rule ? v.ruleMeans : amount(v, value);
      values = rangeText(v);
      if (v.rule == 0 && !inRange(v, 0)) values += fmt::format(" (option: 0 for {})", v.ruleMeans);
    } else {
      shown = v.show(defaults);
      values = v.words;
    }
    out += fmt::format("| {} | `{}` | {} | {} | {} | {} |\n", name, v.option, shown, values,
                       v.perRankToo ? "read by each rank, the same on all" : "no", v.doc);
  }
  return out;
}

}  // namespace gpupeer
