#include <cuda_runtime_api.h>

#include "gpu_test_support.hpp"
#include "gpupeer/peer_access.hpp"
#include "gpupeer/peer_check.hpp"

namespace gpupeer {
namespace {

TEST(PeerCheckGpu, AllMethodsPassOnEveryPeerCapablePair) {
  GPUPEER_REQUIRE_GPUS(2);
  Result<CheckReport> report = runPeerCheck(testing::machine(), {});
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  const Snapshot& s = testing::machine();
  ASSERT_EQ(report.value().pairs.size(), s.gpus.size() * (s.gpus.size() - 1));
  for (const PairCheck& p : report.value().pairs) {
    const PeerPair* facts = s.findPair(p.src, p.dst);
    ASSERT_NE(facts, nullptr);
    ASSERT_EQ(p.methods.size(), 3u);
    // The copy engine must always deliver the right bytes, staged or not.
    EXPECT_EQ(p.methods[0].outcome, CheckOutcome::kPass) << p.methods[0].detail;
    for (const MethodResult& m : p.methods) {
      if (facts->canAccessPeer.valueOr(false)) {
        EXPECT_EQ(m.outcome, CheckOutcome::kPass)
            << "GPU" << p.src << "->GPU" << p.dst << " " << checkMethodName(m.method) << ": " << m.detail;
        EXPECT_EQ(m.casesPassed, static_cast<int>(report.value().cases.size()));
      }
    }
  }
}

TEST(PeerCheckGpu, EnablingTwiceIsNotAnError) {
  GPUPEER_REQUIRE_GPUS(2);
  if (!testing::machine().findPair(0, 1)->canAccessPeer.valueOr(false)) GTEST_SKIP() << "GPU0 cannot access GPU1";
  ASSERT_TRUE(PeerAccess::process().enable(0, 1).isOk());
  ASSERT_TRUE(PeerAccess::process().enable(0, 1).isOk());
  // Enabled behind our back, as another library would: CUDA says "already enabled".
  cudaSetDevice(1);
  cudaError_t first = cudaDeviceEnablePeerAccess(0, 0);
  ASSERT_TRUE(first == cudaSuccess || first == cudaErrorPeerAccessAlreadyEnabled);
  (void)cudaGetLastError();
  PeerAccess fresh;
  EXPECT_TRUE(fresh.enable(1, 0).isOk());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the already-enabled error was left pending";
  cudaSetDevice(0);  // as the tests after this one expect
}

TEST(PeerCheckGpu, OneDeviceIsNotApplicable) {
  GPUPEER_REQUIRE_GPUS(1);
  CheckOptions o;
  o.devices = {0};
  Result<CheckReport> report = runPeerCheck(testing::machine(), o);
  ASSERT_FALSE(report.isOk());
  EXPECT_EQ(report.status().code(), ErrorCode::kUnsupported);
}

}  // namespace
}  // namespace gpupeer
