#include "core/host_identity.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace gpupeer {

std::string hostIdentity() {
  for (const char* name : {"GPUPEER_HOST_ID", "NCCL_HOSTID"})
    if (const char* value = std::getenv(name); value != nullptr && *value != '\0') return value;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  return std::string(host) + "/" + boot;
}

std::string hostDisplayName(const std::string& identity) {
  const std::size_t slash = identity.rfind('/');
  return slash == std::string::npos || slash == 0 ? identity : identity.substr(0, slash);
}

}  // namespace gpupeer
