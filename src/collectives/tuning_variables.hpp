#pragma once
// The environment variables that fill CommunicatorOptions (GPUPEER_ONESHOT_SLOT, GPUPEER_ALGO,
// ...): each declared once in tuning_variables.cpp with the field it fills, the values it
// takes and a line of doc. The library reads them nowhere else; Communicator::create checks
// the options against the same ranges, and docs/collectives.md's table of them is printed from
// this list (`gpupeer coll --tuning-variables`, scripts/tuning_table.py).

#include <cstddef>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "gpupeer/communicator.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

struct TuningVariable {
  static constexpr std::size_t kNoLimit = std::numeric_limits<std::size_t>::max();
  static constexpr std::size_t kNoRule = std::numeric_limits<std::size_t>::max() - 1;

  const char* name;    ///< the environment variable
  const char* option;  ///< the CommunicatorOptions field it fills
  const char* doc;     ///< what it sets, one line
  /// A second variable for the same field (NCCL's name for the same switch), or null; both are
  /// read, `name` first, so where both are set the alias's value is the one that stays.
  const char* alias = nullptr;
  /// A numeric field (bytes or a count) and the range the variable may set it to; the field
  /// also takes `rule` (0 or kByRule), which leaves it to the rule `ruleMeans` describes.
  std::size_t CommunicatorOptions::*bytes = nullptr;
  int CommunicatorOptions::*count = nullptr;
  std::size_t min = 0, max = kNoLimit, multiple = 1;
  std::size_t rule = kNoRule;
  const char* ruleMeans = nullptr;
  /// Any other field: the words it takes, how a word sets it (kInvalidArgument for another)
  /// and how the docs show its value.
  const char* words = nullptr;
  Status (*setWord)(std::string_view word, CommunicatorOptions& o) = nullptr;
  std::string (*show)(const CommunicatorOptions& o) = nullptr;
  /// Also read by each process of a RankCommunicator (one process per GPU), whose ranks must
  /// all be given the same value: the kernels' grids and steps, and the algorithm, must match
  /// on every rank. Variables that size memory (slots) are not: RankCommOptions sizes it.
  bool perRankToo = false;
};

/// The per-rank variables' values in `o`, as text by variable name (what init exchanges).
using RankTuning = std::map<std::string, std::string>;

/// Every tuning variable, in the docs' order.
std::span<const TuningVariable> tuningVariables();

/// Sets `v`'s field of `o` from the variable's text; kInvalidArgument naming the variable for
/// text that does not parse or is out of range.
Status applyTuningText(const TuningVariable& v, std::string_view text, CommunicatorOptions& o);

/// Every numeric field of `o` in its range or at its rule; kInvalidArgument naming the field
/// and its variable otherwise. (Word fields hold only what their words set; the algorithm is
/// checked where it is parsed.)
Status checkTuningRanges(const CommunicatorOptions& o);

/// The perRankToo variables' values in `o`.
RankTuning rankTuningOf(const CommunicatorOptions& o);

/// Copies the perRankToo numeric fields of `from` into `to` (a rank's communicator takes its
/// kernels' geometry from the environment; the algorithm is held apart).
void applyRankTuning(const CommunicatorOptions& from, CommunicatorOptions& to);

/// kInvalidArgument naming the first variable whose value differs between this rank's
/// `mine` and rank `other`'s `theirs`; ok where they agree.
Status sameRankTuning(const RankTuning& mine, int rank, const RankTuning& theirs, int other);

/// docs/collectives.md's table of the variables: a Markdown header and one row per variable,
/// with the defaults of CommunicatorOptions{}.
std::string tuningVariablesMarkdown();

}  // namespace gpupeer
