// readProcessLimits against a fake root: container markers, namespace links, Yama, CapEff and
// /dev/nvidia* nodes.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "probe/probe_parts.hpp"

namespace gpupeer {
namespace {

namespace fs = std::filesystem;

class ProcessProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = (fs::temp_directory_path() / ("gpupeer_process_" + std::to_string(::getpid()))).string();
    fs::remove_all(root_);
    fs::create_directories(root_ + "/proc/self/ns");
    fs::create_directories(root_ + "/proc/sys/kernel/yama");
    fs::create_directories(root_ + "/dev/shm");
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& path, const std::string& text) { std::ofstream(root_ + path) << text; }
  std::string root_;
};

TEST_F(ProcessProbe, ReadsEveryFact) {
  write("/.dockerenv", "");
  fs::create_symlink("ipc:[4026532447]", root_ + "/proc/self/ns/ipc");
  fs::create_symlink("pid:[4026531836]", root_ + "/proc/self/ns/pid");
  write("/proc/sys/kernel/yama/ptrace_scope", "1\n");
  write("/proc/self/status", "Name:\tgpupeer\nCapInh:\t0000000000000000\nCapEff:\t00000000a80425fb\nCapBnd:\t0\n");
  write("/dev/nvidiactl", "");
  write("/dev/nvidia0", "");
  write("/dev/nvidia1", "");
  write("/dev/nvidia-modeset", "");  // not a node CUDA needs: not listed
  Snapshot s;
  probe::readProcessLimits(s, root_);
  const Platform& p = s.platform;
  EXPECT_EQ(p.container.valueOr(""), "docker");
  EXPECT_EQ(p.ipcNamespace.valueOr(""), "ipc:[4026532447]");
  EXPECT_EQ(p.pidNamespace.valueOr(""), "pid:[4026531836]");
  EXPECT_EQ(p.ptraceScope.valueOr(-1), 1);
  EXPECT_EQ(p.capEff.valueOr(""), "00000000a80425fb");
  EXPECT_FALSE(p.hasCapability(19).valueOr(true));  // CAP_SYS_PTRACE not in Docker's default set
  EXPECT_TRUE(p.hasCapability(0).valueOr(false));   // CAP_CHOWN is
  ASSERT_TRUE(p.devShmBytes.known()) << p.devShmBytes.reason();
  EXPECT_GT(p.devShmBytes.value(), 0);
  ASSERT_TRUE(p.memlockBytes.known());
  ASSERT_TRUE(p.deviceNodes.known());
  const std::vector<DeviceNode>& nodes = p.deviceNodes.value();
  ASSERT_EQ(nodes.size(), 4u);
  EXPECT_EQ(nodes[0], (DeviceNode{"/dev/nvidiactl", "ok"}));
  EXPECT_EQ(nodes[1], (DeviceNode{"/dev/nvidia-uvm", "missing"}));
  EXPECT_EQ(nodes[2].path, "/dev/nvidia0");
  EXPECT_EQ(nodes[3].path, "/dev/nvidia1");
}

TEST_F(ProcessProbe, MissingFactsAreUnknownWithTheReason) {
  Snapshot s;
  probe::readProcessLimits(s, root_);
  // Without markers under the root only the process's own environment can name Kubernetes.
  EXPECT_EQ(s.platform.container.valueOr(""), std::getenv("KUBERNETES_SERVICE_HOST") ? "kubernetes" : "none");
  EXPECT_FALSE(s.platform.ipcNamespace.known());
  EXPECT_NE(s.platform.ipcNamespace.reason().find("/proc/self/ns/ipc"), std::string::npos);
  EXPECT_FALSE(s.platform.ptraceScope.known());
  EXPECT_FALSE(s.platform.capEff.known());
}

}  // namespace
}  // namespace gpupeer
