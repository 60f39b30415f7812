#pragma once
// Shared by the kb_*_test.cpp files: a temporary KB directory and hand-converted entries, so
// the loader and matcher tests do not depend on what kb/ holds.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace gpupeer::testing {

/// A fresh directory under $TMPDIR, removed with everything in it at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "gpupeer-kb-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  /// Writes `text` to path()/relative (creating folders) and returns the full path.
  std::string write(const std::string& relative, const std::string& text) const {
    std::filesystem::path p = std::filesystem::path(path_) / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

 private:
  std::string path_;
};

// The two seed documents (/work/shared/seeds/000_*.txt and 001_*.txt), converted by hand to
// kb files: same ids, signatures, regexes and fields; Chinese text and version list left out,
// workaround texts shortened (and listed worst first, to test the ordering).
inline const char* kSeedPeerUnsupported = R"json({
  "id": "cuda/peer-access-unsupported-by-hardware",
  "signature": "RuntimeError: CUDA error: peer access is not supported between these two devices (cudaErrorPeerAccessUnsupported)",
  "regex": "peer access is not supported between these two devices",
  "domain": "cuda",
  "category": "runtime_error",
  "subcategory": null,
  "root_cause": "The two GPUs do not support direct peer-to-peer (P2P) memory access, typically due to hardware topology (e.g., different PCIe switches) or disabled P2P in the driver.",
  "dead_ends": [
    {"action": "", "why_fails": "Enabling P2P via software flags cannot override hardware limitations; it will still fail.", "fail_rate": 0.9, "condition": "", "sources": []},
    {"action": "", "why_fails": "Rebooting the system does not change GPU topology; if P2P is unsupported by hardware, it remains unsupported.", "fail_rate": 0.8, "condition": "", "sources": []}
  ],
  "workarounds": [
    {"action": "Assign each GPU to a separate process", "success_rate": 0.7, "how": "torch.cuda.set_device(rank)", "condition": "", "sources": []},
    {"action": "Disable peer-to-peer in NCCL", "success_rate": 0.75, "how": "export NCCL_P2P_DISABLE=1", "condition": "", "sources": []}
  ],
  "transition_graph": {"leads_to": [], "preceded_by": [], "frequently_confused_with": []},
  "official_doc_url": "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__PEER.html",
  "error_code": "cudaErrorPeerAccessUnsupported",
  "confidence": 0.84,
  "fix_success_rate": 0.7,
  "tags": []
})json";

inline const char* kSeedTensorflowPeer = R"json({
  "id": "tensorflow/gpu-peer-access-error",
  "signature": "InternalError: Peer access from GPU:0 to GPU:1 is not supported by the current CUDA driver or device topology",
  "regex": "InternalError: Peer access from GPU:\\d+ to GPU:\\d+ is not supported by the current CUDA driver or device topology",
  "domain": "tensorflow",
  "category": "system_error",
  "root_cause": "The GPUs in the system do not support peer-to-peer memory access due to hardware limitations, driver version, or PCIe topology constraints.",
  "dead_ends": [
    {"action": "Upgrading to the latest CUDA toolkit without checking driver compatibility.", "why_fails": "Peer access support depends on hardware and driver.", "fail_rate": 0.65, "condition": "", "sources": []}
  ],
  "workarounds": [
    {"action": "Use a cross-device reduction without peer access", "success_rate": 0.8, "how": "tf.distribute.MirroredStrategy(cross_device_ops=tf.distribute.HierarchicalCopyAllReduce())", "condition": "", "sources": []}
  ],
  "transition_graph": {"leads_to": [], "preceded_by": [],
                       "frequently_confused_with": [{"error_id": "cuda/peer-access-unsupported-by-hardware", "probability": 0.5, "condition": "same restriction"}]},
  "official_doc_url": "https://www.tensorflow.org/guide/gpu#multi-gpu_setup",
  "error_code": "GPA",
  "confidence": 0.84,
  "fix_success_rate": 0.8,
  "tags": []
})json";

// A specific NCCL entry and a generic wrapper one. The wrapper's regex is deliberately the
// longer, so only the "wrapper" tag can rank it last.
inline const char* kNcclIpc217 = R"json({
  "id": "test/nccl-ipc-217",
  "signature": "NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices",
  "regex": "NCCL WARN.*failed to open CUDA IPC handle ?: ?217 peer access is not supported",
  "domain": "nccl", "category": "runtime_error",
  "root_cause": "NCCL's P2P transport opened a peer's IPC handle on a pair the driver refuses.",
  "workarounds": [{"action": "Disable NCCL's P2P transport", "success_rate": 0.8, "how": "export NCCL_P2P_DISABLE=1", "condition": "", "sources": []}],
  "transition_graph": {"leads_to": [{"error_id": "test/unhandled-cuda-error", "probability": 0.9, "condition": ""}], "preceded_by": [], "frequently_confused_with": []},
  "tags": ["nccl"]
})json";

inline const char* kWrapperUnhandled = R"json({
  "id": "test/unhandled-cuda-error",
  "signature": "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1269, unhandled cuda error, NCCL version 2.14.3",
  "regex": "(unhandled cuda error(, NCCL version [0-9.]+)?|ncclUnhandledCudaError: Call to CUDA function failed)",
  "domain": "nccl", "category": "runtime_error",
  "root_cause": "A generic NCCL message: a CUDA call inside NCCL failed; the NCCL WARN lines before it name the call.",
  "tags": ["nccl", "wrapper"]
})json";

/// A directory holding the four fixture entries above.
inline void writeFixtureKb(const TempDir& dir) {
  dir.write("cuda/peer-access-unsupported-by-hardware.json", kSeedPeerUnsupported);
  dir.write("tensorflow/gpu-peer-access-error.json", kSeedTensorflowPeer);
  dir.write("test/nccl-ipc-217.json", kNcclIpc217);
  dir.write("test/unhandled-cuda-error.json", kWrapperUnhandled);
}

}  // namespace gpupeer::testing
