// Error codes as people type them: names, family words with numbers, bare numbers, and the
// codes a KB entry's error_code field carries.
#include "gpupeer/api_error_code.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>

#if __has_include(<nccl.h>)
#include <nccl.h>
#endif

namespace gpupeer {
namespace {

ApiErrorCode only(const std::vector<ApiErrorCode>& codes) {
  if (codes.size() != 1) throw std::runtime_error("expected one reading, got " + std::to_string(codes.size()));
  return codes.front();
}

TEST(ApiErrorCode, CudaNameGetsTheRuntimeNumber) {
  ApiErrorCode c = only(readApiErrorCodes("cudaErrorPeerAccessUnsupported"));
  EXPECT_EQ(c.family, ApiErrorFamily::kCuda);
  EXPECT_EQ(c.number, 217);
  EXPECT_EQ(describeApiError(c), "cudaErrorPeerAccessUnsupported (cudaError_t 217)");
}

TEST(ApiErrorCode, DriverSpellingIsTheSameCudaError) {
  ApiErrorCode driver = only(readApiErrorCodes("CUDA_ERROR_NOT_PERMITTED"));
  EXPECT_EQ(driver.number, 800);
  EXPECT_TRUE(sameApiError(driver, only(readApiErrorCodes("cudaErrorNotPermitted"))));
  // A driver-only name is kept without a number rather than refused.
  ApiErrorCode context = only(readApiErrorCodes("CUDA_ERROR_INVALID_CONTEXT"));
  EXPECT_FALSE(context.number.has_value());
}

TEST(ApiErrorCode, FamilyWordsAndNumbers) {
  EXPECT_EQ(only(readApiErrorCodes("CUDA error 217")).name, "cudaErrorPeerAccessUnsupported");
  EXPECT_EQ(only(readApiErrorCodes("  \"cuda failure: 217\" ")).name, "cudaErrorPeerAccessUnsupported");
  EXPECT_EQ(only(readApiErrorCodes("NCCL error 2")).name, "ncclSystemError");
  EXPECT_EQ(only(readApiErrorCodes("ncclResult_t 2")).name, "ncclSystemError");
  EXPECT_EQ(only(readApiErrorCodes("nvmlReturn_t 4")).name, "NVML_ERROR_NO_PERMISSION");
  EXPECT_EQ(only(readApiErrorCodes("NVML error 18")).name, "NVML_ERROR_LIB_RM_VERSION_MISMATCH");
  // A family named with a number its table lacks is still that family's number.
  ApiErrorCode unknown = only(readApiErrorCodes("NCCL error 42"));
  EXPECT_EQ(unknown.family, ApiErrorFamily::kNccl);
  EXPECT_EQ(describeApiError(unknown), "ncclResult_t 42");
}

TEST(ApiErrorCode, BareNumberIsReadInEveryFamilyThatDefinesIt) {
  std::vector<ApiErrorCode> two = readApiErrorCodes("2");
  ASSERT_EQ(two.size(), 3u);
  EXPECT_EQ(two[0].name, "cudaErrorMemoryAllocation");
  EXPECT_EQ(two[1].name, "ncclSystemError");
  EXPECT_EQ(two[2].name, "NVML_ERROR_INVALID_ARGUMENT");
  std::vector<ApiErrorCode> peer = readApiErrorCodes("error 217");
  ASSERT_EQ(peer.size(), 1u);  // only cudaError_t has a 217
  EXPECT_EQ(peer[0].family, ApiErrorFamily::kCuda);
  EXPECT_TRUE(readApiErrorCodes("5000").empty());
}

TEST(ApiErrorCode, TextThatIsNoCodeReadsAsNothing) {
  EXPECT_TRUE(readApiErrorCodes("cudaErrorNotARealError").empty());
  EXPECT_TRUE(readApiErrorCodes("cudaDeviceCanAccessPeer = 0").empty());
  EXPECT_TRUE(readApiErrorCodes("Xid 79").empty());
  EXPECT_TRUE(readApiErrorCodes("CUDA error: peer access is not supported between these two devices").empty());
  EXPECT_TRUE(readApiErrorCodes("").empty());
}

TEST(ApiErrorCode, CodesAnEntryCarries) {
  std::vector<ApiErrorCode> two =
      apiErrorCodesCarried("cudaErrorPeerAccessUnsupported (217) / cudaErrorInvalidResourceHandle");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].number, 217);
  EXPECT_EQ(two[1].name, "cudaErrorInvalidResourceHandle");
  EXPECT_EQ(only(apiErrorCodesCarried("CUDA failure 101 / EPERM")).name, "cudaErrorInvalidDevice");
  EXPECT_TRUE(apiErrorCodesCarried("none (hang)").empty());
  EXPECT_TRUE(apiErrorCodesCarried("DCGM_FR_IMEX_UNHEALTHY (122)").empty());
  EXPECT_TRUE(apiErrorCodesCarried("122").empty());  // a number alone names no family
}

// The written-out table of cudaError_t (src/explain/cuda_error_names.inc) is the runtime's: every
// name cudaGetErrorName gives reads as its number, and a number it has no name for reads as none.
TEST(ApiErrorCode, CudaTableIsTheRuntimes) {
  int named = 0;
  for (int i = 0; i <= 1000; ++i) {
    const char* name = cudaGetErrorName(static_cast<cudaError_t>(i));
    std::vector<ApiErrorCode> byNumber = readApiErrorCodes("cudaError_t " + std::to_string(i));
    if (name == nullptr || std::strncmp(name, "cuda", 4) != 0) {
      for (const ApiErrorCode& c : byNumber) EXPECT_TRUE(c.name.empty()) << i << " is " << c.name;
      continue;
    }
    ++named;
    std::vector<ApiErrorCode> byName = readApiErrorCodes(name);
    ASSERT_EQ(byName.size(), 1u) << name;
    EXPECT_EQ(byName[0].number, i) << name;
    ASSERT_EQ(byNumber.size(), 1u) << i;
    EXPECT_EQ(byNumber[0].name, name);
  }
  EXPECT_GT(named, 100);
}

#if __has_include(<nccl.h>)
TEST(ApiErrorCode, NcclNumbersAreNcclHs) {
  EXPECT_EQ(only(readApiErrorCodes("ncclUnhandledCudaError")).number, static_cast<int>(ncclUnhandledCudaError));
  EXPECT_EQ(only(readApiErrorCodes("ncclSystemError")).number, static_cast<int>(ncclSystemError));
  EXPECT_EQ(only(readApiErrorCodes("ncclInternalError")).number, static_cast<int>(ncclInternalError));
  EXPECT_EQ(only(readApiErrorCodes("ncclInvalidArgument")).number, static_cast<int>(ncclInvalidArgument));
  EXPECT_EQ(only(readApiErrorCodes("ncclInvalidUsage")).number, static_cast<int>(ncclInvalidUsage));
  EXPECT_EQ(only(readApiErrorCodes("ncclRemoteError")).number, static_cast<int>(ncclRemoteError));
  EXPECT_EQ(only(readApiErrorCodes("ncclInProgress")).number, static_cast<int>(ncclInProgress));
}
#endif

}  // namespace
}  // namespace gpupeer
