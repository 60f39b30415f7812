// The cross-process check on a real GPU: a second process (this test binary started again)
// imports a cudaIpc buffer and a cuMem descriptor, checks the bytes and writes its own back.
#include <gtest/gtest.h>

#include "gpu_test_support.hpp"
#include "gpupeer/ipc_check.hpp"

namespace gpupeer {
namespace {

TEST(IpcCheckGpu, TwoProcessesShareMemoryBothWays) {
  GPUPEER_REQUIRE_GPUS(1);
  Result<IpcCheckReport> r = runIpcCheck(testing::machine(), 0);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  const IpcCheckReport& report = r.value();
  ASSERT_EQ(report.results.size(), 2u);
  EXPECT_EQ(report.busId, testing::machine().gpus[0].pciBusId);
  const IpcMechanismResult& ipc = report.results[0];
  EXPECT_EQ(ipc.mechanism, IpcMechanism::kCudaIpc);
  EXPECT_EQ(ipc.outcome, CheckOutcome::kPass) << ipc.detail;
  const IpcMechanismResult& vmm = report.results[1];
  EXPECT_EQ(vmm.mechanism, IpcMechanism::kCuMemPosixFd);
  // Where the machine forbids pidfd_getfd the result must say so and still prove the memory.
  if (vmm.outcome == CheckOutcome::kFail) {
    EXPECT_EQ(vmm.kbId, "nccl/cumem-import-pidfd");
    EXPECT_NE(vmm.detail.find("pidfd"), std::string::npos) << vmm.detail;
  } else {
    EXPECT_EQ(vmm.outcome, CheckOutcome::kPass) << vmm.detail;
  }
  std::cout << renderIpcCheckReport(report);
}

}  // namespace
}  // namespace gpupeer
