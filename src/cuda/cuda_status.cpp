#include "cuda/cuda_status.hpp"

#include "probe/sysfs.hpp"

namespace gpupeer {

std::string busIdOf(int device) {
  char buffer[32] = {0};
  if (cudaDeviceGetPCIBusId(buffer, sizeof buffer, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return {};
  }
  return sysfs::normalizeBusId(buffer);
}

}  // namespace gpupeer
