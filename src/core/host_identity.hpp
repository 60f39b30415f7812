#pragma once
// Which host a process runs on, as ranks compare it: processes on one host can share GPU
// memory; processes on different hosts cannot, whatever their GPUs are.

#include <string>

namespace gpupeer {

/// GPUPEER_HOST_ID if set, else NCCL's own override NCCL_HOSTID, else the host name and the
/// kernel's boot id (two containers of one host share the boot id; cloned machines with one
/// name do not). The overrides let tests make one machine act as several hosts.
std::string hostIdentity();

/// The part of an identity a person recognises: the host name, or the override as given.
std::string hostDisplayName(const std::string& identity);

}  // namespace gpupeer
