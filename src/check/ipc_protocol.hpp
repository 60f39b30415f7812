#pragma once
// What the two processes of the cross-process check (ipc_check.cpp) send each other over their
// Unix socket: fixed-size plain structs, since both ends are the same binary. Internal; here so
// that a CPU test can play the first process's part.

#include <cstddef>
#include <cstdint>

#include "gpupeer/peer_check.hpp"

namespace gpupeer::ipcproto {

/// Set, to the second process's end of the socket, in the environment of the program started
/// again; the library answers that role before main().
inline constexpr const char* kChildVariable = "GPUPEER_IPC_CHECK_CHILD";
inline constexpr std::uint32_t kMagic = 0x67706970;  // "gpip"
/// One VMM granule on every GPU so far (2 MiB), so both buffers are the same size.
inline constexpr std::size_t kBytes = 2u << 20;
inline constexpr int kAnswerTimeoutMs = 60'000;
inline constexpr std::size_t kIpcHandleBytes = 64;  // CU_IPC_HANDLE_SIZE

/// First process to second, with the cuMem descriptor attached (SCM_RIGHTS) when there is one.
struct Request {
  std::uint32_t magic = kMagic;
  char busId[32] = {};
  unsigned char ipcHandle[kIpcHandleBytes] = {};
  std::int32_t parentPid = 0;
  std::int32_t cumemFd = -1;  ///< the descriptor's number in the first process; -1: no cuMem buffer
  std::int32_t ptraceScope = -1;
  std::uint64_t seed = 0;
};

/// One way of sharing, as the second process found it.
struct MechanismAnswer {
  std::int32_t outcome = static_cast<std::int32_t>(CheckOutcome::kSkip);
  char detail[480] = {};
  char kbId[64] = {};
  std::int32_t onlyPidfdRefused = 0;  ///< see IpcMechanismResult
};

/// Second process to first: cuda-ipc, then cumem-posix-fd.
struct Answer {
  std::uint32_t magic = kMagic;
  MechanismAnswer mechanism[2];
};

}  // namespace gpupeer::ipcproto
