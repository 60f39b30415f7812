// Path choice and request checks: everything the transfer engine decides before enqueueing.
#include <gtest/gtest.h>

#include "fixture_support.hpp"
#include "gpupeer/snapshot_json.hpp"
#include "gpupeer/transfer.hpp"

namespace gpupeer {
namespace {

Snapshot fixture(const std::string& name) { return testing::loadFixture(name); }

Path chosen(const Snapshot& s, int a, int b, Path requested = Path::kAuto) {
  Result<PathChoice> c = choosePath(s, a, b, requested);
  EXPECT_TRUE(c.isOk()) << c.status().toString();
  return c.isOk() ? c.value().path : Path::kAuto;
}

TEST(ChoosePath, NvlinkPairsUseTheCopyEngine) {
  Snapshot s = fixture("snapshot_h200_2gpu_captured.json");
  Result<PathChoice> c = choosePath(s, 0, 1, Path::kAuto);
  ASSERT_TRUE(c.isOk());
  EXPECT_EQ(c.value().path, Path::kCopyEngine);
  EXPECT_NE(c.value().reason.find("NV18"), std::string::npos) << c.value().reason;
  EXPECT_EQ(chosen(s, 0, 1, Path::kKernel), Path::kKernel);
  EXPECT_EQ(chosen(s, 0, 1, Path::kStaged), Path::kStaged);
}

TEST(ChoosePath, PairsWithoutP2pAreStagedAndForcedP2pIsRefused) {
  Snapshot s = fixture("snapshot_pcie_4gpu_two_switches.json");
  EXPECT_EQ(chosen(s, 0, 1), Path::kCopyEngine);  // same switch: P2P
  Result<PathChoice> cross = choosePath(s, 0, 2, Path::kAuto);
  ASSERT_TRUE(cross.isOk());
  EXPECT_EQ(cross.value().path, Path::kStaged);
  EXPECT_NE(cross.value().reason.find("no P2P between GPU0 and GPU2"), std::string::npos) << cross.value().reason;
  Result<PathChoice> forced = choosePath(s, 0, 2, Path::kKernel);
  ASSERT_FALSE(forced.isOk());
  EXPECT_EQ(forced.status().code(), ErrorCode::kUnsupported);
}

TEST(ChoosePath, DisableVariablesForceStagingEverywhere) {
  for (const char* name : {"GPUPEER_P2P_DISABLE", "NCCL_P2P_DISABLE"}) {
    Snapshot s = fixture("snapshot_h200_2gpu_captured.json");
    s.environment.insert_or_assign(name, std::string("1"));  // (operator= from a literal trips GCC 12's -Wrestrict)
    Result<PathChoice> c = choosePath(s, 0, 1, Path::kAuto);
    ASSERT_TRUE(c.isOk());
    EXPECT_EQ(c.value().path, Path::kStaged);
    EXPECT_NE(c.value().reason.find(name), std::string::npos);
    EXPECT_FALSE(choosePath(s, 0, 1, Path::kCopyEngine).isOk());
    s.environment.insert_or_assign(name, std::string("0"));
    EXPECT_EQ(chosen(s, 0, 1), Path::kCopyEngine);
  }
}

TEST(ChoosePath, HostAndSameDeviceCopiesUseTheCopyEngineOnly) {
  Snapshot s = fixture("snapshot_h200_2gpu_captured.json");
  EXPECT_EQ(chosen(s, kHost, 1), Path::kCopyEngine);
  EXPECT_EQ(chosen(s, 1, 1), Path::kCopyEngine);
  EXPECT_EQ(choosePath(s, 1, 1, Path::kStaged).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(choosePath(s, kHost, 0, Path::kKernel).status().code(), ErrorCode::kInvalidArgument);
}

TEST(ParsePath, NamesAndAliases) {
  EXPECT_EQ(parsePath("ce").value(), Path::kCopyEngine);
  EXPECT_EQ(parsePath("copy-engine").value(), Path::kCopyEngine);
  EXPECT_EQ(parsePath("kernel").value(), Path::kKernel);
  EXPECT_EQ(parsePath("staged").value(), Path::kStaged);
  EXPECT_EQ(parsePath("auto").value(), Path::kAuto);
  EXPECT_FALSE(parsePath("fast").isOk());
}

TEST(ValidateCopyRequest, RefusesWhatCannotBeCopied) {
  alignas(16) static char buffer[256];
  CopyRequest ok{buffer + 128, 0, buffer, 0, 64};
  EXPECT_TRUE(validateCopyRequest(ok, 2).isOk());
  CopyRequest overlap{buffer + 32, 0, buffer, 0, 64};
  Status st = validateCopyRequest(overlap, 2);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("overlap"), std::string::npos);
  CopyRequest otherDevices{buffer + 32, 1, buffer, 0, 64};  // same numbers, different devices
  EXPECT_TRUE(validateCopyRequest(otherDevices, 2).isOk());
  CopyRequest badDevice{buffer, 2, buffer + 128, 0, 8};
  st = validateCopyRequest(badDevice, 2);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("destination device 2 does not exist"), std::string::npos) << st.message();
  CopyRequest negative{buffer, 0, buffer + 128, -5, 8};
  EXPECT_FALSE(validateCopyRequest(negative, 2).isOk());
  CopyRequest null{nullptr, 0, buffer, 1, 8};
  EXPECT_FALSE(validateCopyRequest(null, 2).isOk());
  CopyRequest empty{nullptr, 0, nullptr, 1, 0};  // nothing to copy: fine
  EXPECT_TRUE(validateCopyRequest(empty, 2).isOk());
  CopyRequest host{buffer, kHost, buffer + 128, 0, 8};
  EXPECT_TRUE(validateCopyRequest(host, 2).isOk());
}

TEST(ValidateCopyRequest, SizesPastFourGigabytesDoNotWrap) {
  // Two ranges 5 GiB apart, 4.5 GiB long: they do not overlap; with 32-bit sizes they would seem to.
  auto* base = reinterpret_cast<char*>(std::uintptr_t{1} << 40);
  std::size_t len = (std::size_t{9} << 29);  // 4.5 GiB
  CopyRequest far{base + (std::size_t{5} << 30), 0, base, 0, len};
  EXPECT_TRUE(validateCopyRequest(far, 1).isOk());
  CopyRequest near{base + (std::size_t{4} << 30), 0, base, 0, len};
  EXPECT_FALSE(validateCopyRequest(near, 1).isOk());
}

}  // namespace
}  // namespace gpupeer
