// Small pure pieces: KB ids of API errors, device lists, the pattern, logging levels, the
// check report, and bench statistics, sizes and output formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "core/random_bytes.hpp"
#include "gpupeer/bench.hpp"
#include "gpupeer/error_kb.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "gpupeer/log.hpp"
#include "gpupeer/pattern.hpp"
#include "gpupeer/peer_check.hpp"

namespace gpupeer {
namespace {

// The start-up id's nonce and the descriptor offers' names come from here: two fills differ, and
// a fill longer than one getrandom read (256 bytes) is filled to its end.
TEST(RandomBytes, FillsEveryByteAndDiffers) {
  std::vector<unsigned char> a(1000, 0), b(1000, 0);
  ASSERT_TRUE(fillRandom(a.data(), a.size()).isOk());
  ASSERT_TRUE(fillRandom(b.data(), b.size()).isOk());
  EXPECT_NE(a, b);
  // The last 64 bytes all zero after a fill: a chance of 2^-512.
  EXPECT_FALSE(std::all_of(a.end() - 64, a.end(), [](unsigned char c) { return c == 0; }));
  EXPECT_TRUE(fillRandom(nullptr, 0).isOk());
}

TEST(ErrorKb, EveryMappedIdExistsInTheKnowledgeBase) {
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({GPUPEER_SOURCE_KB_DIR}, nullptr);
  ASSERT_TRUE(kb.isOk());
  for (const char* name :
       {"cudaErrorPeerAccessUnsupported", "cudaErrorPeerAccessAlreadyEnabled", "cudaErrorPeerAccessNotEnabled",
        "cudaErrorTooManyPeers", "cudaErrorSystemNotReady", "cudaErrorInsufficientDriver",
        "cudaErrorDevicesUnavailable", "NVML_ERROR_LIB_RM_VERSION_MISMATCH"}) {
    std::string id = kbIdForApiError(name);
    ASSERT_FALSE(id.empty()) << name;
    EXPECT_NE(kb.value().find(id), nullptr) << name << " -> " << id;
  }
  EXPECT_EQ(kbIdForApiError("cudaErrorNotARealError"), "");
}

TEST(StatusText, NamesCallDevicesErrorAndKb) {
  Status s = GPUPEER_ERROR(ErrorCode::kCuda, "peer access is not supported between these two devices");
  s.withCall("cudaDeviceEnablePeerAccess").withDevice(0, "0000:18:00.0").withDevice(1, "0000:2a:00.0");
  s.withApiError("cudaErrorPeerAccessUnsupported", "peer access is not supported between these two devices");
  s.withKbId("cuda/peer-access-unsupported-by-hardware");
  std::string text = s.toString();
  for (const char* part :
       {"cudaDeviceEnablePeerAccess", "device 0 (0000:18:00.0) -> device 1 (0000:2a:00.0)",
        "cudaErrorPeerAccessUnsupported", "cuda/peer-access-unsupported-by-hardware", "tests/unit/core_test.cpp:"})
    EXPECT_NE(text.find(part), std::string::npos) << part << " not in " << text;
}

TEST(DeviceList, AcceptsValidAndNamesTheBadEntry) {
  EXPECT_EQ(parseDeviceList("0,1,3", 4).value(), (std::vector<int>{0, 1, 3}));
  auto dup = parseDeviceList("0,1,0", 4);
  ASSERT_FALSE(dup.isOk());
  EXPECT_NE(dup.status().message().find("device 0 is listed twice"), std::string::npos);
  auto range = parseDeviceList("0,4", 4);
  ASSERT_FALSE(range.isOk());
  EXPECT_NE(range.status().message().find("device 4 does not exist"), std::string::npos);
  EXPECT_FALSE(parseDeviceList("-1", 4).isOk());
  EXPECT_FALSE(parseDeviceList("a,b", 4).isOk());
  EXPECT_FALSE(parseDeviceList("1,,2", 4).isOk());
  EXPECT_FALSE(parseDeviceList("", 4).isOk());
  EXPECT_FALSE(parseDeviceList("1.5", 4).isOk());
}

TEST(Pattern, NeverZeroSeededAndFoundWhenWrong) {
  std::vector<std::uint8_t> a(100003), b(100003);
  fillPattern(a.data(), a.size(), 42);
  fillPattern(b.data(), b.size(), 43);
  EXPECT_EQ(std::count(a.begin(), a.end(), 0), 0);
  EXPECT_NE(a, b);
  for (std::size_t i : {0u, 7u, 8u, 4093u, 100002u}) EXPECT_EQ(a[i], patternByte(42, i));
  // A stream started at an offset equals the tail of the whole stream.
  std::vector<std::uint8_t> tail(100);
  fillPattern(tail.data(), tail.size(), 42, 5001);
  EXPECT_TRUE(std::equal(tail.begin(), tail.end(), a.begin() + 5001));
  EXPECT_FALSE(findMismatch(a.data(), a.size(), 42).has_value());
  a[777] ^= 0x10;
  a[900] = 0;
  auto m = findMismatch(a.data(), a.size(), 42);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->offset, 777u);
  EXPECT_EQ(m->count, 2u);
  EXPECT_NE(transferSeed(0, 1, 0), transferSeed(1, 0, 0));
}

TEST(LogLevel, ParsesLikeNcclDebug) {
  EXPECT_EQ(parseLogLevel("INFO"), LogLevel::kInfo);
  EXPECT_EQ(parseLogLevel("trace"), LogLevel::kTrace);
  EXPECT_EQ(parseLogLevel("WARN"), LogLevel::kWarn);
  EXPECT_EQ(parseLogLevel("none"), LogLevel::kNone);
  EXPECT_EQ(parseLogLevel("bogus"), LogLevel::kWarn);
}

TEST(CheckReport, TextAndJsonCarryOutcomesAndDetails) {
  CheckReport r;
  r.devices = {0, 1};
  r.cases = defaultCheckCases(1u << 20);
  r.pairs.push_back({0,
                     1,
                     {{CheckMethod::kCopyEngine, CheckOutcome::kPass, "", false, 5},
                      {CheckMethod::kKernelRead, CheckOutcome::kFail, "case 1 (4093 B): first at offset 12", false, 1},
                      {CheckMethod::kKernelWrite, CheckOutcome::kSkip, "no peer access", false, 0}}});
  std::string text = renderCheckReport(r);
  EXPECT_NE(text.find("GPU0->GPU1    PASS          FAIL          SKIP"), std::string::npos) << text;
  EXPECT_NE(text.find("first at offset 12"), std::string::npos);
  EXPECT_NE(text.find("Result: 1 passed, 1 failed, 1 skipped."), std::string::npos);
  auto j = nlohmann::json::parse(checkReportToJson(r));
  EXPECT_EQ(j["failed"], 1);
  EXPECT_EQ(j["pairs"][0]["methods"][1]["outcome"], "FAIL");
  // The cases cover 1 byte, odd sizes and unaligned offsets.
  EXPECT_EQ(r.cases[0].bytes, 1u);
  bool odd = false, unaligned = false;
  for (const CheckCase& c : r.cases) {
    odd = odd || c.bytes % 2;
    unaligned = unaligned || (c.srcOffset % 16 && c.dstOffset % 16);
  }
  EXPECT_TRUE(odd && unaligned);
}

TEST(BenchPure, StatisticsAndSizes) {
  Stats s = summarize({3, 1, 2, 10});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_EQ(summarize({}).samples, 0);
  EXPECT_EQ(parseByteSize("512M").value(), 512u << 20);
  EXPECT_EQ(parseByteSize("1G").value(), 1u << 30);
  EXPECT_EQ(parseByteSize("8KiB").value(), 8192u);
  EXPECT_EQ(parseByteSize("4096").value(), 4096u);
  EXPECT_FALSE(parseByteSize("M").isOk());
  EXPECT_FALSE(parseByteSize("12Q").isOk());
  EXPECT_FALSE(parseByteSize("99999999999999999G").isOk());
  auto sizes = sweepSizes(8, 1u << 30, 2);
  ASSERT_TRUE(sizes.isOk());
  EXPECT_EQ(sizes.value().size(), 28u);
  EXPECT_EQ(sizes.value().back(), 1u << 30);
  EXPECT_FALSE(sweepSizes(0, 8, 2).isOk());
  EXPECT_FALSE(sweepSizes(16, 8, 2).isOk());
  EXPECT_FALSE(sweepSizes(8, 16, 1.0).isOk());
  EXPECT_EQ(formatBytes(512u << 20), "512 MiB");
  EXPECT_EQ(formatBytes(1000), "1000 B");
}

TEST(BenchPure, TransfersTogetherCountAllBytesOverTheTimeToTheLastOne) {
  // Three 1 GB copies that a shared engine ran one after another (1, 2 and 3 ms): their own
  // rates add up to 1000 + 500 + 333 GB/s, together they moved 3 GB in 3 ms.
  EXPECT_DOUBLE_EQ(togetherGbps(1'000'000'000, {1e-3, 2e-3, 3e-3}), 1000.0);
  EXPECT_DOUBLE_EQ(togetherGbps(1'000'000'000, {2e-3, 2e-3}), 1000.0);
  EXPECT_EQ(togetherGbps(1'000'000'000, {}), 0.0);
  EXPECT_EQ(togetherGbps(1'000'000'000, {1e-3, 0.0}), 0.0);
}

TEST(BenchRender, MatrixMarksLowFiguresAndFormatsParse) {
  BenchResult r;
  r.key = "ce_write";
  r.description = "copy engine";
  for (auto [a, b, v] : {std::tuple{0, 1, 396.0}, std::tuple{1, 0, 150.0}}) {
    BenchCell c;
    c.row = a;
    c.col = b;
    c.label = "GPU" + std::to_string(a) + "->GPU" + std::to_string(b);
    c.value = summarize({v, v, v});
    c.theoreticalGBps = 478.125;
    c.verified = true;
    c.bytes = 512u << 20;
    r.cells.push_back(c);
  }
  std::string text = renderBenchText(r, 2);
  EXPECT_NE(text.find("396.0 (83%)"), std::string::npos) << text;
  EXPECT_NE(text.find("150.0 (31% LOW)"), std::string::npos) << text;
  EXPECT_NE(text.find("SUM ce_write 546.0 GB/s"), std::string::npos) << text;
  Snapshot s;
  auto j = nlohmann::json::parse(benchToJsonLine(r, s));
  EXPECT_EQ(j["cells"].size(), 2u);
  EXPECT_NEAR(j["cells"][0]["percentOfLink"].get<double>(), 82.8, 0.1);
  std::string csv = benchToCsv(r, true);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  BenchResult waived;
  waived.key = "sm_read";
  waived.waived = "needs two GPUs; 1 selected";
  EXPECT_NE(renderBenchText(waived, 1).find("WAIVED: needs two GPUs"), std::string::npos);
}

}  // namespace
}  // namespace gpupeer
