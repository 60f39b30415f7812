#pragma once
// The regular one-shot variant's step between flags where the options leave it to the rule:
// pure, so that tests/unit/one_shot_step_rules_test.cpp can check the measured rule.

#include <cstddef>

namespace gpupeer {

/// The bytes each block of the regular variant pushes between two flags (0: the kernel's own
/// 32 KiB), for `ranks` ranks in one process or, `acrossProcesses`, one per process. One process
/// and 2 processes take the kernel's 32 KiB: 2 processes on 4x H200 (GPUs 0-1), graphs, all-reduce
/// of 64 / 128 / 256 MiB 197.8 / 381.7 / 754.6 us against 201.1 / 391.2 / 769.6 in 16 KiB steps
/// and 200.6 / 386.0 / 760.1 in 64 KiB. From 3 processes 16 KiB: 4 processes, all-reduce of 64 /
/// 256 MiB 311.7 / 1175.2 us against 327.7 / 1191.3 in 32 KiB steps, reduce-scatter of 256 MiB
/// 589.6 against 595.9 (bench/results/h200x4/2026-11-28-pieces-in-one-kernel, step-*).
std::size_t oneShotStepBytesFor(int ranks, bool acrossProcesses);

}  // namespace gpupeer
