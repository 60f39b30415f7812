#pragma once
/// \file ipc_check.hpp
/// Whether processes can share GPU memory the two ways multi-process collectives do: a
/// cudaMalloc buffer exported with cudaIpcGetMemHandle (gpupeer's communicators, vLLM's custom
/// all-reduce, NCCL without cuMem), and a cuMem (VMM) allocation exported as a POSIX file
/// descriptor that the importer takes from the owner with pidfd_getfd (NCCL with cuMem, PyTorch's
/// expandable segments). runIpcCheck starts a second process that imports both, checks a known
/// pattern and writes its own, which this process then checks; a way that fails is reported with
/// why (ptrace scope, kernel, driver, memory type) and the KB entry. The reports are plain values;
/// call runIpcCheck from one thread at a time.

#include <string>
#include <vector>

#include "gpupeer/peer_check.hpp"
#include "gpupeer/snapshot.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// The two ways of sharing device memory across processes.
enum class IpcMechanism { kCudaIpc, kCuMemPosixFd };
const char* ipcMechanismName(IpcMechanism m);  ///< "cuda-ipc", "cumem-posix-fd"

/// Something in the process's surroundings that keeps processes from sharing memory.
struct IpcObstacle {
  std::string mechanism;  ///< "cuda-ipc", "cumem-posix-fd", "posix-shm" or "all"
  std::string why;        ///< in words, with the value read
  std::string kbId;       ///< the entry that explains it
};

/// The obstacles the snapshot's platform facts show: Yama's ptrace scope (pidfd_getfd), a
/// private IPC or PID namespace (processes of other containers), a missing or small /dev/shm.
/// Pure: no GPU, no process started.
std::vector<IpcObstacle> ipcObstacles(const Snapshot& s);

/// A communicator's failure to share memory by `mechanism` at start-up (`what`: the call that
/// failed and its error), said as `gpupeer check --ipc` says it of the same surroundings
/// (`platform`, e.g. read by the probe): each obstacle in the way of that mechanism with its KB
/// entry, and the command that tests sharing here. The status's KB id is the first such
/// obstacle's, else `fallbackKbId`. Pure.
Status ipcSharingFailure(ErrorCode code, const std::string& what, IpcMechanism mechanism, const Platform& platform,
                         const std::string& fallbackKbId);

/// One way of sharing, as the check found it.
struct IpcMechanismResult {
  IpcMechanism mechanism = IpcMechanism::kCudaIpc;
  CheckOutcome outcome = CheckOutcome::kSkip;
  std::string detail;  ///< PASS: what moved; FAIL or SKIP: the step that failed and why
  std::string kbId;    ///< FAIL: the entry that explains it
  /// cumem-posix-fd FAIL only: pidfd_getfd was refused, but the same memory imported and checked
  /// fine when its descriptor came over a Unix socket (SCM_RIGHTS).
  bool onlyPidfdRefused = false;
};

/// The whole check on one GPU.
struct IpcCheckReport {
  int device = 0;
  std::string busId;
  std::vector<IpcMechanismResult> results;  ///< cuda-ipc, then cumem-posix-fd
  std::vector<IpcObstacle> obstacles;       ///< ipcObstacles of the snapshot
  int count(CheckOutcome o) const;          ///< results with this outcome
};

/// Shares a buffer each way between this process and a second one on GPU `device` and checks
/// the bytes both ways. The second process is this program started again (/proc/self/exe) with
/// GPUPEER_IPC_CHECK_CHILD set; a program that calls runIpcCheck therefore answers that role
/// before its main() (a process that has used CUDA cannot fork one that uses it). Where gpupeer
/// is a shared library the program loaded (Python and libgpupeer_c.so), the program is started
/// again with that library in LD_PRELOAD, whose constructor answers the same way. Fails only
/// when the check cannot run at all; what fails between the processes is in the report.
Result<IpcCheckReport> runIpcCheck(const Snapshot& s, int device);

/// What `gpupeer check --ipc` says on a machine without a GPU: "no NVIDIA GPU visible: <why>"
/// and a line per obstacle of ipcObstacles, terminal-safe, each line ending in a newline.
std::string renderIpcNoGpu(const Snapshot& s);

/// The report as `gpupeer check --ipc` prints it, and as JSON.
std::string renderIpcCheckReport(const IpcCheckReport& r);
std::string ipcCheckReportToJson(const IpcCheckReport& r);

}  // namespace gpupeer
