// The catalogue of bad input (docs/bad-inputs.md), command-line side: each bad argument, file
// or environment gets its documented exit code and a message that names the problem, before
// the machine is probed where the argument alone is wrong; output files are whole or absent; a
// snapshot's strings cannot drive the terminal. Standard output: standard_output_cli_test.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "file_size_limit.hpp"
#include "gpupeer/snapshot_json.hpp"

namespace gpupeer {
namespace {

const std::string kData = GPUPEER_TEST_DATA_DIR;
const std::string kEightGpus = kData + "/snapshot_hgx_h100_8gpu.json";

struct ArgCase {
  const char* name;
  std::string args;
  int exitCode;
  const char* messagePart;  // in stderr
  std::string env = "";
};
// Test names say which case; GoogleTest prints the case by its name, not as bytes.
void PrintTo(const ArgCase& c, std::ostream* os) { *os << c.name; }

// Arguments wrong in themselves: refused with exit 2 and the reason, GPU or not (none of them
// may say that no GPU is visible: the machine is not probed).
std::vector<ArgCase> argumentCases() {
  return {
      {"CheckDuplicateDevice", "check -d 0,0", 2, "listed twice"},
      {"CheckDeviceNotANumber", "check -d zero", 2, "is not a device number"},
      {"CheckNegativeDevice", "check -d -1", 2, "device -1 does not exist"},
      {"CheckDeviceListTrailingJunk", "check -d 0,1x", 2, "is not a device number"},
      {"CheckZeroSize", "check --size-mib 0", 2, "--size-mib must be between 1 and 4096"},
      {"CheckHugeSize", "check --size-mib 999999", 2, "--size-mib must be between 1 and 4096"},
      {"BenchZeroSize", "bench -s 0", 2, "at least one byte"},
      {"BenchUnknownUnit", "bench -s 12X", 2, "unknown unit"},
      {"BenchHugeSize", "bench -s 99999999999999999999", 2, "too large"},
      {"BenchSizeNotANumber", "bench -s lots", 2, "does not start with a number"},
      {"BenchReversedSweep", "bench --sweep -b 1G -e 8", 2, "below its start"},
      {"BenchSweepFactorOne", "bench --sweep -f 1", 2, "greater than 1"},
      {"BenchSweepTooManySizes", "bench --sweep -b 1 -e 1G -f 1.001", 2, "more than 256 sizes"},
      {"BenchUnknownTestcase", "bench -t ce_write,warp_drive", 2, "unknown testcase 'warp_drive'"},
      {"BenchPairOfOne", "bench --sweep --pair 0", 2, "--pair takes two devices"},
      {"BenchPairTwice", "bench --sweep --pair 1,1", 2, "listed twice"},
      {"BenchDuplicateDevice", "bench -d 2,2", 2, "listed twice"},
      {"BenchUnknownKernel", "bench --sm-kernel turbo", 2, "--sm-kernel takes vector or bulk"},
      {"BenchUnknownPath", "bench --path wormhole", 2, "wormhole"},
      {"BenchTinyStagingChunk", "bench --staging-chunk 1", 2, "at least 4K"},
      {"BenchZeroSamples", "bench -i 0", 2, "-i must be >= 1"},
      {"BenchNegativeCopies", "bench --copies -4", 2, "--copies 1..64"},
      {"BenchUnknownSweepTestcase", "bench --sweep -t ce_write,warp_drive", 2, "the sweep takes ce_read"},
      {"BenchBidirSweepTestcase", "bench --sweep -t ce_bidir", 2, "not 'ce_bidir'"},
      {"BenchPairWithoutSweep", "bench --pair 0,1", 2, "--pair applies to --sweep"},
      {"BenchSweepSizesWithoutSweep", "bench -b 8 -e 1G", 2, "applies to --sweep"},
      {"BenchOnlyCommas", "bench -t ,,,", 2, "',,,' names no testcase"},
      {"BenchEmptyTestcaseList", "bench -t ''", 2, "'' names no testcase"},
      {"BenchJsonAndCsv", "bench --json --csv", 2, "excludes"},
      {"BenchEmptyDeviceList", "bench -d ''", 2, "names no device"},
      {"CheckEmptyDeviceList", "check -d ''", 2, "'' names no device"},
      {"CheckOnlyCommas", "check -d ,", 2, "',' names no device"},
      {"CollEmptyDeviceList", "coll --devices ''", 2, "names no device"},
      {"CollProcRankPastProcs", "coll --proc-rank 5 --procs 2", 2, "--proc-rank 5 is not a rank of --procs 2 (0 to 1)"},
      {"CollProcRankWithoutProcs", "coll --proc-rank 0", 2, "--proc-rank needs --procs"},
      {"CollTooManyProcs", "coll --procs 99", 2, "give 1 to 8 processes"},
      {"CollUnknownOp", "coll all_shuffle", 2, "all_shuffle"},
      {"CollUnknownType", "coll --datatype float128", 2, "float128"},
      {"CollUnknownRedOp", "coll --op median", 2, "median"},
      {"CollRedOpNotForType", "coll --datatype int8 --op avg", 2, "avg"},
      // nccl-tests' -d TYPE, -o REDOP and the file --json once took: refused naming what takes them.
      {"CollDataTypeOnDevices", "coll -d bfloat16", 2, "give the data type with --datatype bfloat16"},
      {"CollRedOpOnOutput", "coll all_reduce -o max", 2, "give the reduction with --op max"},
      {"CollJsonWithFile", "coll all_reduce --json out.json", 2, "write it to a file with -o/--output FILE"},
      {"CollJsonWithFileNoOp", "coll --json out.json", 2, "--json takes no file ('out.json')"},
      {"CollUnknownOption", "coll all_reduce --bogus", 2, "not expected: --bogus"},
      {"CollEmptyOutputName", "coll all_reduce -o ''", 2, "empty file name"},
      {"CollNegativeRoot", "coll broadcast -r -1", 2, "-r >= 0"},
      {"CollZeroSize", "coll -b 0 -e 8", 2, "at least 1 byte"},
      {"CollReversedSizes", "coll -b 1G -e 1K", 2, "below its start"},
      {"CollHugeSize", "coll -b 8 -e 1T", 2, "at most 16 GiB"},
      {"CollZeroIterations", "coll -n 0", 2, "-n 0: give 1 or more timed operations"},
      {"CollNegativeWarmup", "coll -w -1", 2, "-w -1: give 0 or more"},
      {"CollNegativeGraphReplays", "coll -G -2", 2, "-G -2: give 0 (eager) or more"},
      {"CollNegativeGpuCount", "coll -g -1", 2, "-g 0 (all) or a count of GPUs"},
      {"CollDuplicateDevice", "coll -d 0,0", 2, "listed twice"},
      {"CollUnknownBaseline", "coll --baseline mpi", 2, "--baseline 'mpi': the only baseline is --baseline nccl"},
      {"CollSlotWithoutProcs", "coll --slot 8M", 2, "apply to --procs"},
      {"CollRegisteredWithoutProcs", "coll --registered", 2, "apply to --procs"},
      {"CollZeroCopyWithoutRegistered", "coll --procs 2 --zero-copy-from 0", 2, "applies to --registered"},
      {"CollZeroCopyNotASize", "coll --procs 2 --registered --zero-copy-from lots", 2, "does not start with a number"},
      {"UnknownCommand", "teleport", 2, "unknown command 'teleport'"},
      {"UnknownOptionBeforeTheCommand", "--bogus", 2, "unknown option '--bogus'"},
      {"EmptySnapshotName", "topo --snapshot ''", 2, "empty file name"},
      {"EmptyOutputName", "snapshot -o ''", 2, "empty file name"},
      {"ReportEmptyOutputName", "report -o ''", 2, "empty file name"},
      {"ExplainNothing", "explain", 2, "give the error text"},
      {"ExplainTextAndFile", "explain word --file x.log", 2, "not both"},
      {"ExplainMissingLog", "explain --file /nonexistent/x.log", 2, "cannot open"},
      {"ExplainFolderAsLog", "explain --file /tmp", 2, "'/tmp' is a folder; give a log file"},
      {"ExplainShortFile", "explain -f x.log", 2,
       "-f is the size factor of bench and coll sweeps; read a log with "
       "--file x.log"},
      {"ExplainMissingKbDir", "explain --kb /nonexistent/kb word", 2, "does not exist"},
      {"ExplainNegativeTop", "explain --top -3 word", 2, "--top: Value -3 not in range"},
  };
}

class BadArgument : public ::testing::TestWithParam<ArgCase> {
 protected:
  testing::TempDir scratch_;
};

TEST_P(BadArgument, IsRefusedBeforeTheMachineIsProbed) {
  const ArgCase& c = GetParam();
  CliRun r = runCli(scratch_, c.args, nullptr, c.env);
  EXPECT_EQ(r.exitCode, c.exitCode) << r.err;
  EXPECT_NE(r.err.find(c.messagePart), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("no NVIDIA GPU visible"), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Catalogue, BadArgument, ::testing::ValuesIn(argumentCases()),
                         [](const auto& info) { return std::string(info.param.name); });

class BadInputCli : public ::testing::Test {
 protected:
  CliRun run(const std::string& args, const std::string& env = "") { return runCli(scratch_, args, nullptr, env); }
  std::string snapshotWith(const std::string& pointer, const nlohmann::json& value) {
    std::ifstream in(kData + "/snapshot_h200_2gpu_captured.json");
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(in);
    j[nlohmann::ordered_json::json_pointer(pointer)] = value;
    return scratch_.write("damaged.json", j.dump());
  }
  testing::TempDir scratch_;
};

// Numbers only the GPU count can refute: exit 2 where the machine has GPUs, 3 where it has none.
TEST_F(BadInputCli, DeviceOutOfRangeIsRefusedOnceTheGpusAreCounted) {
  for (const char* args : {"check -d 0,99", "bench -d 64 -t ce_write", "coll -d 0,77"}) {
    CliRun r = run(args);
    if (r.exitCode == 3) {
      EXPECT_NE(r.err.find("GPU"), std::string::npos) << args << ": " << r.err;
    } else {
      EXPECT_EQ(r.exitCode, 2) << args << ": " << r.err;
      EXPECT_NE(r.err.find("does not exist"), std::string::npos) << args << ": " << r.err;
    }
  }
}

TEST_F(BadInputCli, OddSizesAreAcceptedNotRefused) {
  CliRun r = run("coll -b 13 -e 13 -n 1 -w 0");  // 13 bytes: 3 floats; runs where two GPUs are
  EXPECT_NE(r.exitCode, 2) << r.err;
}

TEST_F(BadInputCli, RootOutOfRangeIsRefused) {
  CliRun r = run("coll broadcast -r 9 -b 8 -e 8");
  EXPECT_TRUE(r.exitCode == 2 || r.exitCode == 3) << r.err;
  if (r.exitCode == 2) {
    EXPECT_NE(r.err.find("root 9 is not a rank"), std::string::npos) << r.err;
  }
}

TEST_F(BadInputCli, SnapshotThatNeverEndsIsRefused) {
  CliRun r = run("doctor --snapshot /dev/zero");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("larger than 64 MiB"), std::string::npos) << r.err;
}

TEST_F(BadInputCli, FifoAsSnapshotOrResultsIsRefusedNotWaitedOn) {
  std::string fifo = scratch_.path() + "/input.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);  // nobody writes it
  for (const std::string& args :
       {"doctor --snapshot " + fifo, "topo --snapshot " + fifo,
        "report --snapshot " + kEightGpus + " --results " + fifo + " -o " + scratch_.path() + "/r.html"}) {
    CliRun r = run(args);
    EXPECT_EQ(r.exitCode, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find("'" + fifo + "' is a FIFO"), std::string::npos) << args << ": " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(scratch_.path() + "/r.html"));
}

TEST_F(BadInputCli, ResultsThatNeverEndAreRefused) {
  CliRun r = run("report --snapshot " + kEightGpus + " --results /dev/zero -o " + scratch_.path() + "/r.html");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("results file '/dev/zero' is larger than 64 MiB"), std::string::npos) << r.err;
}

TEST_F(BadInputCli, ResultsWithAWronglyTypedFieldNameTheField) {
  std::string results =
      scratch_.write("typed.jsonl", R"({"testcase": "ce_write", "cells": [{"src": 0, "dst": 1, "verified": "yes"}]})");
  CliRun r = run("report --snapshot " + kEightGpus + " --results " + results + " -o " + scratch_.path() + "/r.html");
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("typed.jsonl: field 'cells[0].verified': expected true or false"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("internal"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(scratch_.path() + "/r.html"));
}

TEST_F(BadInputCli, DeeplyNestedSnapshotIsRefused) {
  std::string file = scratch_.write("deep.json", std::string(1 << 20, '[') + std::string(1 << 20, ']'));
  CliRun r = run("topo --snapshot " + file);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("nested more than"), std::string::npos) << r.err;
}

TEST_F(BadInputCli, BinarySnapshotIsRefused) {
  std::string file = scratch_.write("binary.json", std::string("\0\xff\xfe\x01\x7f", 5));
  CliRun r = run("doctor --snapshot " + file);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
}

TEST_F(BadInputCli, SnapshotNumberOutOfRangeIsRefused) {
  std::string file = scratch_.write("overflow.json", R"({"schema": "gpupeer.snapshot", "version": 1e400})");
  CliRun r = run("topo --snapshot " + file);
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("not valid JSON"), std::string::npos) << r.err;
}

TEST_F(BadInputCli, NonsenseValueIsRefusedWithItsField) {
  CliRun r = run("doctor --snapshot " + snapshotWith("/gpus/1/pcie/currentWidth", -8));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("gpus[1].pcie.currentWidth"), std::string::npos) << r.err;
}

TEST_F(BadInputCli, FailedSnapshotOutputLeavesTheOldFile) {
  std::string out = scratch_.write("kept.json", "old contents");
  CliRun r = run("snapshot --snapshot " + scratch_.path() + "/missing.json -o " + out);
  EXPECT_EQ(r.exitCode, 2);
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "old contents");
}

TEST_F(BadInputCli, SnapshotOutputThatCannotBeWrittenLeavesNothingBehind) {
  CliRun r;
  {
    testing::FileSizeLimit full(4096);  // a full disk: the snapshot is larger, stderr's line fits
    r = run("snapshot --snapshot " + kEightGpus + " -o " + scratch_.path() + "/new.json");
  }
  EXPECT_EQ(r.exitCode, 4) << r.err;
  EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(scratch_.path()))
    entries += e.path().filename() != "stderr.txt";
  EXPECT_EQ(entries, 0) << "a temporary or partial file was left behind";
}

TEST_F(BadInputCli, SnapshotOutputReplacesTheOldFileWhole) {
  std::string out = scratch_.write("replaced.json", "old contents");
  CliRun r = run("snapshot --snapshot " + kEightGpus + " -o " + out);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  Result<Snapshot> written = loadSnapshotFile(out);
  EXPECT_TRUE(written.isOk()) << written.status().toString();
}

TEST_F(BadInputCli, EscapeSequencesInASnapshotAreShownNotObeyed) {
  std::string file = snapshotWith("/hostname",
                                  "evil\x1b]0;owned\x07\x1b[2J\xc2\x9b"
                                  "31m");
  CliRun r = run("snapshot --snapshot " + file);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x07'), std::string::npos);
  EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos);
  EXPECT_NE(r.out.find("evil\\x1b]0;owned\\x07\\x1b[2J\\u009b31m"), std::string::npos) << r.out;
}

TEST_F(BadInputCli, EscapeSequencesInAGpuNameAreShownNotObeyed) {
  CliRun r = run("topo --snapshot " + snapshotWith("/gpus/0/name", "H200\x1b[8m hidden"));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  r = run("doctor --snapshot " + snapshotWith("/gpus/0/name", "H200\x1b[8m hidden"));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
}

// Every path that echoes untrusted text to a terminal: a report's file name, a GPU-less
// snapshot's reason and CUDA_VISIBLE_DEVICES, a KB folder in a warning, a log's C1 byte.
TEST_F(BadInputCli, EchoedFileNamesAndReasonsAreShownNotObeyed) {
  std::string report = scratch_.path() + "/r\x1b]0;owned\x07.html";
  CliRun r = run("report --snapshot " + kEightGpus + " -o " + quote(report));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("r\\x1b]0;owned\\x07.html"), std::string::npos) << r.out;

  std::ifstream in(kData + "/snapshot_h200_2gpu_captured.json");
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(in);
  j["gpus"] = nlohmann::json::array();
  j["pairs"] = nlohmann::json::array();
  j["deviceCount"] = {{"unknown", "cudaGetDeviceCount failed\x1b[2J\xc2\x9b"}};
  j["environment"]["CUDA_VISIBLE_DEVICES"] = "0\x1b]0;owned\x07";
  std::string noGpu = scratch_.write("no-gpu.json", j.dump());
  // From a snapshot, and from this machine with the variable set (no GPU left to see either way).
  for (const std::string& args : {"topo --snapshot " + noGpu, "doctor --snapshot " + noGpu, std::string("check"),
                                  std::string("check --ipc"), std::string("bench -t ce_write")}) {
    r = run(args, "CUDA_VISIBLE_DEVICES=\"$(printf 'x\\033[2J')\" ");
    EXPECT_TRUE(args.starts_with("doctor") || r.exitCode == 3) << args << ": " << r.exitCode << r.err;
    for (char c : {'\x1b', '\x07'}) EXPECT_EQ((r.out + r.err).find(c), std::string::npos) << args << r.err;
    EXPECT_EQ((r.out + r.err).find("\xc2\x9b"), std::string::npos) << args << r.err;
  }
  r = run("topo --snapshot " + noGpu);
  EXPECT_NE(r.err.find("failed\\x1b[2J\\u009b"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("0\\x1b]0;owned\\x07"), std::string::npos) << r.err;

  r = run("explain peer access is not supported between these two devices",
          "GPUPEER_KB_PATH=" + quote(scratch_.path() + "/kb\x1b[8m\x9b") + " ");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kb\\x1b[8m\\x9b"), std::string::npos) << r.err;
}

TEST_F(BadInputCli, C1ByteInALogIsShownNotObeyed) {
  std::string log = scratch_.write("c1.log",
                                   "peer access is not supported between these two devices \x9b"
                                   "2J \xc2\x9b"
                                   "31m\n");
  CliRun r = run("explain --file " + log);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out.find('\x9b'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("devices \\x9b2J \\u009b31m"), std::string::npos) << r.out;
}

TEST_F(BadInputCli, ControlCharactersInALogAreShownNotObeyed) {
  std::string log = scratch_.write(
      "backspace.log", "peer access is not supported between these two devices\x08\x08\x08\x08\x08\x08 fine\n");
  CliRun r = run("explain --file " + log);
  EXPECT_EQ(r.out.find('\x08'), std::string::npos) << r.out;
}

TEST_F(BadInputCli, InvalidUtf8LogGivesValidJson) {
  std::string log =
      scratch_.write("utf8.log", "\xff\xfe peer access is not supported between these two devices \xc3\n");
  CliRun r = run("explain --json --file " + log);
  EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
}

TEST_F(BadInputCli, KbPathWithHostileDirectoriesStillExplains) {
  std::string file = scratch_.write("not-a-dir", "x");
  CliRun r = run("explain peer access is not supported between these two devices",
                 "GPUPEER_KB_PATH=::/nonexistent:" + file + ":" + std::string(5000, 'a') + " ");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
}

TEST_F(BadInputCli, KbDirectoryWithBadEntriesWarnsAndGoesOn) {
  scratch_.write("kb/cuda/binary.json", std::string("\0\x01\xff", 3));
  scratch_.write("kb/cuda/deep.json", std::string(10000, '[') + std::string(10000, ']'));
  scratch_.write("kb/cuda/overflow.json", R"({"id": "cuda/o", "regex": "x", "confidence": 1e999})");
  CliRun r = run("explain --kb " + scratch_.path() + "/kb peer access is not supported between these two devices");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("binary.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nested more than"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("overflow.json"), std::string::npos) << r.err;
}

TEST_F(BadInputCli, GarbageDebugLevelIsIgnored) {
  CliRun r = run("topo --snapshot " + kEightGpus, "GPUPEER_DEBUG=\"$(printf '\\377\\033[2J')\" ");
  EXPECT_EQ(r.exitCode, 0) << r.err;
}

TEST_F(BadInputCli, InvalidUtf8EnvironmentGivesValidSnapshotJson) {
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "NCCL_P2P_LEVEL", "GPUPEER_P2P_DISABLE", "NCCL_DEBUG"}) {
    CliRun r = run("snapshot --json", std::string(name) + "=$(printf '\\377\\376\\033[2J') ");
    EXPECT_EQ(r.exitCode, 0) << name << ": " << r.err;
    EXPECT_TRUE(nlohmann::json::accept(r.out)) << name << ": " << r.out.substr(0, 300);
  }
}

TEST_F(BadInputCli, HugeEnvironmentValueIsCaptured) {
  CliRun r = run("snapshot --json", "CUDA_VISIBLE_DEVICES=" + std::string(100000, '7') + " ");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::accept(r.out));
}

TEST_F(BadInputCli, NonsenseP2pSettingInASnapshotIsReportedNotObeyed) {
  CliRun r = run("doctor --snapshot " + snapshotWith("/environment/NCCL_P2P_LEVEL",
                                                     "\x1b[2J"
                                                     "BANANA"));
  EXPECT_NE(r.exitCode, 2) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
}

}  // namespace
}  // namespace gpupeer
