// The parts of the cross-process check that need no GPU: the obstacles the platform facts show,
// passing a descriptor between two real processes both ways (SCM_RIGHTS, pidfd_getfd under this
// machine's ptrace scope), and the report.
#include "gpupeer/ipc_check.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "check/ipc_protocol.hpp"
#include "core/fd_passing.hpp"
#include "fixture_support.hpp"
#include "probe/probe_parts.hpp"

namespace gpupeer {
namespace {

using testing::loadFixture;

const IpcObstacle* obstacleFor(const std::vector<IpcObstacle>& all, const std::string& mechanism) {
  for (const IpcObstacle& o : all)
    if (o.mechanism == mechanism) return &o;
  return nullptr;
}

TEST(IpcObstacles, HealthyProcessHasNone) {
  // ptrace_scope 1 there, but with CAP_SYS_PTRACE: pidfd_getfd is allowed.
  EXPECT_TRUE(ipcObstacles(loadFixture("snapshot_h200_2gpu_process_healthy.json")).empty());
  // Snapshots that do not record the process facts say nothing either.
  EXPECT_TRUE(ipcObstacles(loadFixture("snapshot_hgx_h100_8gpu.json")).empty());
}

TEST(IpcObstacles, PtraceScopeBlocksTakingDescriptors) {
  std::vector<IpcObstacle> o = ipcObstacles(loadFixture("snapshot_fault_ptrace_scope_2.json"));
  const IpcObstacle* fd = obstacleFor(o, "cumem-posix-fd");
  ASSERT_NE(fd, nullptr);
  EXPECT_NE(fd->why.find("ptrace_scope=2 without CAP_SYS_PTRACE"), std::string::npos) << fd->why;
  EXPECT_EQ(fd->kbId, "nccl/cumem-import-pidfd");
  EXPECT_EQ(obstacleFor(o, "cuda-ipc"), nullptr);  // cudaIpc handles are plain bytes
  // Scope 1 without CAP_SYS_PTRACE refuses siblings too; with it, scope 2 allows it.
  Snapshot one = loadFixture("snapshot_fault_ptrace_scope_2.json");
  one.platform.ptraceScope = 1;
  ASSERT_NE(obstacleFor(ipcObstacles(one), "cumem-posix-fd"), nullptr);
  Snapshot s = loadFixture("snapshot_fault_ptrace_scope_2.json");
  s.platform.capEff = std::string("00000000a80c25fb");  // bit 19 set
  EXPECT_EQ(obstacleFor(ipcObstacles(s), "cumem-posix-fd"), nullptr);
}

TEST(IpcObstacles, PrivateIpcNamespaceAndSmallDevShm) {
  std::vector<IpcObstacle> ns = ipcObstacles(loadFixture("snapshot_fault_private_ipc_namespace.json"));
  const IpcObstacle* all = obstacleFor(ns, "all");
  ASSERT_NE(all, nullptr);
  EXPECT_NE(all->why.find("own IPC namespace ipc:["), std::string::npos) << all->why;
  EXPECT_EQ(all->kbId, "nccl/ipc-across-containers");
  const IpcObstacle* shm = obstacleFor(ipcObstacles(loadFixture("snapshot_fault_dev_shm_64m.json")), "posix-shm");
  ASSERT_NE(shm, nullptr);
  EXPECT_NE(shm->why.find("64 MiB"), std::string::npos) << shm->why;
  // No /dev/shm at all: the reason the probe gave.
  Snapshot none = loadFixture("snapshot_h200_2gpu_process_healthy.json");
  none.platform.devShmBytes = Known<std::int64_t>::unknown("/dev/shm: No such file or directory");
  shm = obstacleFor(ipcObstacles(none), "posix-shm");
  ASSERT_NE(shm, nullptr);
  EXPECT_NE(shm->why.find("No such file or directory"), std::string::npos) << shm->why;
}

// A communicator that cannot map a peer's buffer says what `gpupeer check --ipc` says of the same
// surroundings: the obstacles in the way of CUDA IPC handles, their KB entry, and the command.
TEST(IpcSharingFailure, PrivateIpcNamespaceIsNamedWithItsKbEntryAndTheCheck) {
  Snapshot s = loadFixture("snapshot_fault_private_ipc_namespace.json");
  Status st = ipcSharingFailure(ErrorCode::kCuda, "cudaIpcOpenMemHandle ... failed: cudaErrorMapBufferObjectFailed",
                                IpcMechanism::kCudaIpc, s.platform, "cuda/ipc-open-mem-handle-failed");
  EXPECT_EQ(st.code(), ErrorCode::kCuda);
  EXPECT_EQ(st.kbId(), "nccl/ipc-across-containers");
  EXPECT_NE(st.message().find("In this process's surroundings: own IPC namespace ipc:["), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("(KB nccl/ipc-across-containers)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("`gpupeer check --ipc`"), std::string::npos) << st.message();
}

TEST(IpcSharingFailure, ObstaclesOfOtherMechanismsAreLeftOut) {
  // ptrace scope blocks taking descriptors, not CUDA IPC handles; a small /dev/shm neither.
  Snapshot s = loadFixture("snapshot_fault_ptrace_scope_2.json");
  s.platform.devShmBytes = std::int64_t{64} << 20;
  Status st = ipcSharingFailure(ErrorCode::kCuda, "cudaIpcOpenMemHandle failed", IpcMechanism::kCudaIpc, s.platform,
                                "cuda/ipc-open-mem-handle-failed");
  EXPECT_EQ(st.kbId(), "cuda/ipc-open-mem-handle-failed");
  EXPECT_EQ(st.message().find("ptrace"), std::string::npos) << st.message();
  EXPECT_EQ(st.message().find("/dev/shm"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("same IPC and PID namespace"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("`gpupeer check --ipc`"), std::string::npos) << st.message();
  // The same surroundings for descriptors: the ptrace scope, with its entry.
  Status fd = ipcSharingFailure(ErrorCode::kCuda, "pidfd_getfd failed", IpcMechanism::kCuMemPosixFd, s.platform,
                                "cuda/ipc-open-mem-handle-failed");
  EXPECT_EQ(fd.kbId(), "nccl/cumem-import-pidfd");
  EXPECT_NE(fd.message().find("ptrace_scope=2"), std::string::npos) << fd.message();
}

TEST(IpcNoGpu, ReasonAndObstaclesAreShownEscaped) {
  Snapshot s = loadFixture("snapshot_fault_private_ipc_namespace.json");
  s.gpus.clear();
  s.pairs.clear();
  s.deviceCount = Known<int>::unknown("cudaErrorNoDevice \x1b[31m");
  std::string text = renderIpcNoGpu(s);
  EXPECT_EQ(text.rfind("no NVIDIA GPU visible: ", 0), 0u) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_NE(text.find("\n  all: own IPC namespace"), std::string::npos) << text;
  EXPECT_NE(text.find("(KB nccl/ipc-across-containers)\n"), std::string::npos) << text;
}

TEST(FdPassing, DescriptorCrossesAUnixSocket) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {  // sends the pipe's write end with a message, then exits
    ::close(sv[0]);
    const char msg[] = "fd";
    ::_exit(fdpass::sendWithFd(sv[1], msg, sizeof msg, pipeFds[1]).isOk() ? 0 : 1);
  }
  ::close(sv[1]);
  ::close(pipeFds[1]);
  char msg[3] = {};
  int got = -1;
  Status s = fdpass::receiveWithFd(sv[0], msg, sizeof msg, &got, 10'000);
  ASSERT_TRUE(s.isOk()) << s.toString();
  EXPECT_STREQ(msg, "fd");
  ASSERT_GE(got, 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  // The received descriptor is the child's pipe end: bytes written to it come out here.
  ASSERT_EQ(::write(got, "x", 1), 1);
  char c = 0;
  ASSERT_EQ(::read(pipeFds[0], &c, 1), 1);
  EXPECT_EQ(c, 'x');
  ::close(got);
  ::close(pipeFds[0]);
  ::close(sv[0]);
}

TEST(FdPassing, ReceiveGivesUpAfterItsTimeout) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  char buf[4];
  int fd = -1;
  Status s = fdpass::receiveWithFd(sv[0], buf, sizeof buf, &fd, 50);
  EXPECT_EQ(s.code(), ErrorCode::kTimeout) << s.toString();
  ::close(sv[1]);
  s = fdpass::receiveWithFd(sv[0], buf, sizeof buf, &fd, 1000);
  EXPECT_EQ(s.code(), ErrorCode::kSystem) << s.toString();  // closed before answering
  ::close(sv[0]);
}

// A child takes a descriptor from its parent with pidfd_getfd, as one rank takes another's:
// whether that works depends on this machine's Yama scope and capabilities, and the explanation
// must name what refused it.
TEST(FdPassing, PidfdGetfdFollowsThisMachinesPtraceScope) {
  Snapshot here;
  probe::readProcessLimits(here, "");
  int scope = here.platform.ptraceScope.valueOr(-1);
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    fdpass::TakenFd t = fdpass::takeFdFrom(parent, pipeFds[1]);
    int answer[2] = {t.fd >= 0 ? 1 : 0, t.err};
    if (t.fd >= 0) (void)!::write(t.fd, "y", 1);
    (void)!::write(report[1], answer, sizeof answer);
    ::_exit(0);
  }
  int answer[2] = {0, 0};
  ASSERT_EQ(::read(report[0], answer, sizeof answer), static_cast<ssize_t>(sizeof answer));
  ::waitpid(pid, nullptr, 0);
  if (answer[1] == ENOSYS) GTEST_SKIP() << "this kernel has no pidfd_getfd (Linux 5.6+)";
  if (answer[0]) {
    char c = 0;
    ASSERT_EQ(::read(pipeFds[0], &c, 1), 1);  // written through the taken descriptor
    EXPECT_EQ(c, 'y');
    EXPECT_NE(scope, 3) << "scope 3 forbids pidfd_getfd, yet it worked";
  } else {
    EXPECT_EQ(answer[1], EPERM) << std::strerror(answer[1]);
    std::string why = fdpass::whyTakeFdFailed(answer[1], scope);
    if (scope > 0)
      EXPECT_NE(why.find("ptrace_scope=" + std::to_string(scope)), std::string::npos) << why;
    else
      EXPECT_NE(why.find("seccomp"), std::string::npos) << why;
  }
  for (int fd : {pipeFds[0], pipeFds[1], report[0], report[1]}) ::close(fd);
}

TEST(FdPassing, ExplanationsNameTheCause) {
  EXPECT_NE(fdpass::whyTakeFdFailed(EPERM, 1).find("descendants"), std::string::npos);
  EXPECT_NE(fdpass::whyTakeFdFailed(EPERM, 2).find("CAP_SYS_PTRACE"), std::string::npos);
  EXPECT_NE(fdpass::whyTakeFdFailed(EPERM, 3).find("every process"), std::string::npos);
  EXPECT_NE(fdpass::whyTakeFdFailed(ENOSYS, 0).find("5.6"), std::string::npos);
}

// The second process's part without a GPU: the gpupeer binary started with the child variable
// answers before its main() runs, over the socket it was handed. With no usable GPU behind the
// bus id both ways fail, each saying why; the answer itself proves the start-up and the protocol.
TEST(IpcCheckChild, AnswersBeforeMainOverTheHandedSocket) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  int childEnd = ::fcntl(sv[1], F_DUPFD, 3);  // without close-on-exec
  ASSERT_GE(childEnd, 0);
  ::close(sv[1]);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::string var = std::string(ipcproto::kChildVariable) + "=" + std::to_string(childEnd);
    char* envp[] = {var.data(), nullptr};
    char arg0[] = "gpupeer", arg1[] = "--version";  // main() would print a version; the hook exits first
    char* argv[] = {arg0, arg1, nullptr};
    ::execve(GPUPEER_CLI_PATH, argv, envp);
    ::_exit(127);
  }
  ::close(childEnd);
  ipcproto::Request q;
  std::snprintf(q.busId, sizeof q.busId, "%s", "0000:ff:1f.7");  // no GPU has this address
  q.parentPid = ::getpid();
  ASSERT_TRUE(fdpass::sendWithFd(sv[0], &q, sizeof q, -1).isOk());
  ipcproto::Answer a;
  int fd = -1;
  Status got = fdpass::receiveWithFd(sv[0], &a, sizeof a, &fd, 30'000);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(sv[0]);
  ASSERT_TRUE(got.isOk()) << got.toString();
  EXPECT_EQ(a.magic, ipcproto::kMagic);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::string why = a.mechanism[0].detail;
  EXPECT_EQ(a.mechanism[0].outcome, static_cast<int>(CheckOutcome::kFail)) << why;
  EXPECT_TRUE(why.find("cannot load libcuda.so.1") != std::string::npos ||
              why.find("CUDA does not start in the second process") != std::string::npos)
      << why;
}

TEST(IpcCheckReport, TextAndJsonNameMechanismOutcomeAndEntry) {
  IpcCheckReport r;
  r.device = 1;
  r.busId = "0000:2a:00.0";
  r.results = {{IpcMechanism::kCudaIpc, CheckOutcome::kPass, "2097152 bytes checked", ""},
               {IpcMechanism::kCuMemPosixFd, CheckOutcome::kFail, "pidfd_getfd: Operation not permitted",
                "nccl/cumem-import-pidfd"}};
  r.obstacles = ipcObstacles(loadFixture("snapshot_fault_ptrace_scope_2.json"));
  EXPECT_EQ(r.count(CheckOutcome::kFail), 1);
  std::string text = renderIpcCheckReport(r);
  EXPECT_NE(text.find("GPU1 (0000:2a:00.0)"), std::string::npos) << text;
  EXPECT_NE(text.find("cumem-posix-fd  FAIL  pidfd_getfd: Operation not permitted"), std::string::npos) << text;
  EXPECT_NE(text.find("explained by KB nccl/cumem-import-pidfd"), std::string::npos) << text;
  nlohmann::json j = nlohmann::json::parse(ipcCheckReportToJson(r));
  EXPECT_EQ(j["results"][0]["mechanism"], "cuda-ipc");
  EXPECT_EQ(j["results"][1]["outcome"], "FAIL");
  EXPECT_EQ(j["results"][1]["onlyPidfdRefused"], false);
  EXPECT_EQ(j["obstacles"][0]["kbId"], "nccl/cumem-import-pidfd");
}

}  // namespace
}  // namespace gpupeer
