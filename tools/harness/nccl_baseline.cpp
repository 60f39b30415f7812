#include "harness/nccl_baseline.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstring>

#include "cuda/cuda_status.hpp"
#include "gpupeer/log.hpp"
#include "gpupeer/version_text.hpp"

namespace gpupeer {
namespace {

// The part of nccl.h used here, declared by hand so that building gpupeer never needs NCCL's
// headers; values as in NCCL 2.x. ncclDataType_t and ncclRedOp_t are C enums, passed as int
// (the same size and calling convention).
using NcclComm = struct ncclComm*;
using NcclWindow = struct ncclWindow_vidmem*;
using NcclResult = int;
struct NcclId {  // ncclUniqueId, passed by value
  char internal[128];
};
constexpr int kNcclWinCollSymmetric = 0x01;  // NCCL_WIN_COLL_SYMMETRIC

int ncclTypeOf(DataType t) {
  switch (t) {
    case DataType::kInt8: return 0;
    case DataType::kUInt8: return 1;
    case DataType::kInt32: return 2;
    case DataType::kInt64: return 4;
    case DataType::kFloat16: return 6;
    case DataType::kFloat32: return 7;
    case DataType::kFloat64: return 8;
    case DataType::kBFloat16: return 9;
    case DataType::kFloat8E4M3: return 10;  // NCCL 2.24+, on sm_90 and newer
    case DataType::kFloat8E5M2: return 11;
  }
  return -1;
}
int ncclOpOf(RedOp op) {
  switch (op) {
    case RedOp::kSum: return 0;
    case RedOp::kProd: return 1;
    case RedOp::kMax: return 2;
    case RedOp::kMin: return 3;
    case RedOp::kAvg: return 4;
  }
  return -1;
}

}  // namespace

struct NcclBaseline::Impl {
  void* lib = nullptr;
  NcclResult (*initAll)(NcclComm*, int, const int*) = nullptr;
  NcclResult (*initRank)(NcclComm*, int, NcclId, int) = nullptr;
  NcclResult (*getUniqueId)(NcclId*) = nullptr;
  NcclResult (*destroy)(NcclComm) = nullptr;
  NcclResult (*groupStart)() = nullptr;
  NcclResult (*groupEnd)() = nullptr;
  const char* (*errorString)(NcclResult) = nullptr;
  NcclResult (*getVersion)(int*) = nullptr;
  NcclResult (*allReduce)(const void*, void*, std::size_t, int, int, NcclComm, cudaStream_t) = nullptr;
  NcclResult (*allGather)(const void*, void*, std::size_t, int, NcclComm, cudaStream_t) = nullptr;
  NcclResult (*reduceScatter)(const void*, void*, std::size_t, int, int, NcclComm, cudaStream_t) = nullptr;
  NcclResult (*broadcast)(const void*, void*, std::size_t, int, int, NcclComm, cudaStream_t) = nullptr;
  NcclResult (*reduce)(const void*, void*, std::size_t, int, int, int, NcclComm, cudaStream_t) = nullptr;
  NcclResult (*allToAll)(const void*, void*, std::size_t, int, NcclComm, cudaStream_t) = nullptr;  // 2.28+
  NcclResult (*send)(const void*, std::size_t, int, int, NcclComm, cudaStream_t) = nullptr;
  NcclResult (*recv)(void*, std::size_t, int, int, NcclComm, cudaStream_t) = nullptr;
  NcclResult (*memAlloc)(void**, std::size_t) = nullptr;
  NcclResult (*memFree)(void*) = nullptr;
  NcclResult (*windowRegister)(NcclComm, void*, std::size_t, NcclWindow*, int) = nullptr;  // 2.27+
  NcclResult (*windowDeregister)(NcclComm, NcclWindow) = nullptr;
  std::vector<int> devices;  // CUDA ordinal of each rank driven here
  std::vector<NcclComm> comms;
  int firstRank = 0;                 // the rank of comms[0]: 0, or this process's rank (openRank)
  int totalRanks = 0;                // in the whole communicator
  std::vector<void*> windowBuffers;  // from ncclMemAlloc, one per rank; empty when none
  std::vector<NcclWindow> windows;   // registered over windowBuffers; nullptr where not (yet)

  Status check(NcclResult r, const char* call) const {
    if (r == 0) return Status::ok();
    Status s(ErrorCode::kNccl, errorString ? errorString(r) : fmt::format("NCCL error {}", r));
    return s.withCall(call)
        .withApiError(fmt::format("ncclResult {}", r), errorString ? errorString(r) : "")
        .withLocation(__FILE__, __LINE__);
  }

  std::string versionText() const {
    int v = 0;
    if (!getVersion || getVersion(&v) != 0) return "unknown";
    return ncclVersionText(v);
  }

  Status missing(const char* symbol, const char* needs = "") const {
    return GPUPEER_ERROR(ErrorCode::kUnsupported, fmt::format("NCCL {} lacks {}{}", versionText(), symbol, needs));
  }

  // One call per rank inside one NCCL group: with a single thread driving every GPU, NCCL
  // only launches when all ranks' parts are known, otherwise the first rank would wait
  // forever for the others. A failed enqueue still closes the group so NCCL is left usable.
  template <class PerRank>
  Status grouped(const char* call, PerRank perRank) const {
    GPUPEER_RETURN_IF_ERROR(check(groupStart(), "ncclGroupStart"));
    for (int r = 0; r < static_cast<int>(comms.size()); ++r) {
      if (NcclResult res = perRank(r, firstRank + r); res != 0) {
        groupEnd();
        return check(res, call);
      }
    }
    return check(groupEnd(), "ncclGroupEnd");
  }
};

NcclBaseline::NcclBaseline(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NcclBaseline::~NcclBaseline() {
  // Windows belong to the communicators: deregister them while the communicators live.
  releaseWindows();
  for (NcclComm c : impl_->comms)
    if (c) impl_->destroy(c);
  // libnccl stays loaded: its helper threads may still be winding down after ncclCommDestroy.
}

namespace {

// libnccl.so.2 opened and its symbols bound; symbols a given NCCL lacks stay nullptr, and
// run() and allocateWindows() say which one.
Result<std::unique_ptr<NcclBaseline::Impl>> loadNccl() {
  auto impl = std::make_unique<NcclBaseline::Impl>();
  impl->lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!impl->lib) {
    const char* err = dlerror();
    return GPUPEER_ERROR(ErrorCode::kUnsupported,
                         std::string("NCCL not available (libnccl.so.2): ") + (err ? err : "dlopen failed"));
  }
  auto bind = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(impl->lib, name));
  };
  bind(impl->initAll, "ncclCommInitAll");
  bind(impl->initRank, "ncclCommInitRank");
  bind(impl->getUniqueId, "ncclGetUniqueId");
  bind(impl->destroy, "ncclCommDestroy");
  bind(impl->groupStart, "ncclGroupStart");
  bind(impl->groupEnd, "ncclGroupEnd");
  bind(impl->errorString, "ncclGetErrorString");
  bind(impl->getVersion, "ncclGetVersion");
  bind(impl->allReduce, "ncclAllReduce");
  bind(impl->allGather, "ncclAllGather");
  bind(impl->reduceScatter, "ncclReduceScatter");
  bind(impl->broadcast, "ncclBroadcast");
  bind(impl->reduce, "ncclReduce");
  bind(impl->allToAll, "ncclAlltoAll");
  bind(impl->send, "ncclSend");
  bind(impl->recv, "ncclRecv");
  bind(impl->memAlloc, "ncclMemAlloc");
  bind(impl->memFree, "ncclMemFree");
  bind(impl->windowRegister, "ncclCommWindowRegister");
  bind(impl->windowDeregister, "ncclCommWindowDeregister");
  if (!impl->destroy) return impl->missing("ncclCommDestroy");
  if (!impl->groupStart || !impl->groupEnd) return impl->missing("ncclGroupStart/ncclGroupEnd");
  return impl;
}

}  // namespace

Result<std::unique_ptr<NcclBaseline>> NcclBaseline::open(const std::vector<int>& devices) {
  if (devices.empty()) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "NCCL baseline needs at least one device");
  auto loaded = loadNccl();
  if (!loaded.isOk()) return loaded.status();
  std::unique_ptr<Impl> impl = std::move(loaded).value();
  if (!impl->initAll) return impl->missing("ncclCommInitAll");
  impl->devices = devices;
  impl->totalRanks = static_cast<int>(devices.size());
  impl->comms.assign(devices.size(), nullptr);
  GPUPEER_RETURN_IF_ERROR(impl->check(
      impl->initAll(impl->comms.data(), static_cast<int>(devices.size()), devices.data()), "ncclCommInitAll"));
  return std::unique_ptr<NcclBaseline>(new NcclBaseline(std::move(impl)));
}

Result<NcclBaseline::Id> NcclBaseline::uniqueId() {
  auto loaded = loadNccl();
  if (!loaded.isOk()) return loaded.status();
  const Impl& n = *loaded.value();
  if (!n.getUniqueId) return n.missing("ncclGetUniqueId");
  NcclId raw{};
  GPUPEER_RETURN_IF_ERROR(n.check(n.getUniqueId(&raw), "ncclGetUniqueId"));
  Id id;
  std::memcpy(id.data(), raw.internal, sizeof raw.internal);
  return id;
}

Result<std::unique_ptr<NcclBaseline>> NcclBaseline::openRank(int nranks, const Id& id, int rank, int device) {
  auto loaded = loadNccl();
  if (!loaded.isOk()) return loaded.status();
  std::unique_ptr<Impl> impl = std::move(loaded).value();
  if (!impl->initRank) return impl->missing("ncclCommInitRank");
  impl->devices = {device};
  impl->firstRank = rank;
  impl->totalRanks = nranks;
  impl->comms.assign(1, nullptr);
  NcclId raw{};
  std::memcpy(raw.internal, id.data(), sizeof raw.internal);
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  GPUPEER_RETURN_IF_ERROR(impl->check(impl->initRank(&impl->comms[0], nranks, raw, rank), "ncclCommInitRank"));
  return std::unique_ptr<NcclBaseline>(new NcclBaseline(std::move(impl)));
}

std::string NcclBaseline::version() const { return impl_->versionText(); }

Status NcclBaseline::run(CollOp op, const std::vector<const void*>& send, const std::vector<void*>& recv,
                         std::size_t count, DataType type, RedOp redop, int root,
                         const std::vector<cudaStream_t>& streams) {
  const Impl& n = *impl_;
  const std::size_t ranks = n.comms.size();
  if (send.size() != ranks || recv.size() != ranks || streams.size() != ranks)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("NCCL {}: {} send buffers, {} receive buffers and {} streams for {} ranks "
                                     "(one of each per rank)",
                                     collOpName(op), send.size(), recv.size(), streams.size(), ranks));
  if (collOpRooted(op) && (root < 0 || root >= n.totalRanks))
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("NCCL {}: root {} is not a rank (0..{})", collOpName(op), root, n.totalRanks - 1));
  const int t = ncclTypeOf(type), o = ncclOpOf(redop), last = n.totalRanks - 1;
  switch (op) {
    case CollOp::kAllReduce:
      if (!n.allReduce) return n.missing("ncclAllReduce");
      return n.grouped("ncclAllReduce",
                       [&](int r, int) { return n.allReduce(send[r], recv[r], count, t, o, n.comms[r], streams[r]); });
    case CollOp::kAllGather:
      if (!n.allGather) return n.missing("ncclAllGather");
      return n.grouped("ncclAllGather",
                       [&](int r, int) { return n.allGather(send[r], recv[r], count, t, n.comms[r], streams[r]); });
    case CollOp::kReduceScatter:
      if (!n.reduceScatter) return n.missing("ncclReduceScatter");
      return n.grouped("ncclReduceScatter", [&](int r, int) {
        return n.reduceScatter(send[r], recv[r], count, t, o, n.comms[r], streams[r]);
      });
    case CollOp::kBroadcast:
      if (!n.broadcast) return n.missing("ncclBroadcast");
      return n.grouped("ncclBroadcast", [&](int r, int) {
        return n.broadcast(send[r], recv[r], count, t, root, n.comms[r], streams[r]);
      });
    case CollOp::kReduce:
      if (!n.reduce) return n.missing("ncclReduce");
      return n.grouped("ncclReduce", [&](int r, int) {
        return n.reduce(send[r], recv[r], count, t, o, root, n.comms[r], streams[r]);
      });
    case CollOp::kAllToAll: {
      if (n.allToAll)
        return n.grouped("ncclAlltoAll",
                         [&](int r, int) { return n.allToAll(send[r], recv[r], count, t, n.comms[r], streams[r]); });
      // Before ncclAlltoAll (2.28): nccl-tests' way, a send and a receive of `count`
      // elements with every peer (itself included), slot p of each buffer for peer p.
      if (!n.send || !n.recv) return n.missing("ncclAlltoAll and ncclSend/ncclRecv");
      const std::size_t slot = count * dataTypeSize(type);
      return n.grouped("ncclSend/ncclRecv (all-to-all)", [&](int r, int) {
        for (int p = 0; p <= last; ++p) {
          if (NcclResult res =
                  n.send(static_cast<const char*>(send[r]) + p * slot, count, t, p, n.comms[r], streams[r]))
            return res;
          if (NcclResult res = n.recv(static_cast<char*>(recv[r]) + p * slot, count, t, p, n.comms[r], streams[r]))
            return res;
        }
        return NcclResult{0};
      });
    }
    case CollOp::kSendRecv:
      if (!n.send || !n.recv) return n.missing("ncclSend/ncclRecv");
      return n.grouped("ncclSend/ncclRecv", [&](int r, int rank) {
        const int to = rank == last ? 0 : rank + 1, from = rank == 0 ? last : rank - 1;
        if (NcclResult res = n.send(send[r], count, t, to, n.comms[r], streams[r])) return res;
        return n.recv(recv[r], count, t, from, n.comms[r], streams[r]);
      });
  }
  return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "NCCL baseline: unknown collective");
}

Result<std::vector<void*>> NcclBaseline::allocateWindows(std::size_t bytes) {
  Impl& n = *impl_;
  if (bytes == 0) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "NCCL symmetric windows of 0 bytes");
  if (!n.windowRegister || !n.windowDeregister) return n.missing("ncclCommWindowRegister", " (needs 2.27+)");
  if (!n.memAlloc || !n.memFree) return n.missing("ncclMemAlloc/ncclMemFree");
  releaseWindows();  // one set of windows at a time; earlier pointers are no longer valid
  const std::size_t ranks = n.comms.size();
  n.windowBuffers.assign(ranks, nullptr);
  n.windows.assign(ranks, nullptr);
  int previous = 0;
  cudaGetDevice(&previous);
  // ncclMemAlloc allocates on the current device, hence one cudaSetDevice per rank.
  Status status;
  for (std::size_t r = 0; r < ranks && status.isOk(); ++r) {
    if (cudaError_t e = cudaSetDevice(n.devices[r]); e != cudaSuccess) {
      (void)cudaGetLastError();
      status = cudaFailure(e, "cudaSetDevice", n.devices[r], __FILE__, __LINE__);
    } else {
      status = n.check(n.memAlloc(&n.windowBuffers[r], bytes), "ncclMemAlloc");
      if (!status.isOk()) status.withDevice(n.devices[r]);
    }
  }
  cudaSetDevice(previous);
  // Registration is collective over the communicators, so all ranks register in one group.
  if (status.isOk())
    status = n.grouped("ncclCommWindowRegister", [&](int r, int) {
      return n.windowRegister(n.comms[r], n.windowBuffers[r], bytes, &n.windows[r], kNcclWinCollSymmetric);
    });
  if (!status.isOk()) {
    releaseWindows();
    return status;
  }
  return n.windowBuffers;
}

void NcclBaseline::releaseWindows() {
  Impl& n = *impl_;
  if (n.windowBuffers.empty()) return;
  bool anyWindow = false;
  for (NcclWindow w : n.windows) anyWindow = anyWindow || w != nullptr;
  if (anyWindow) {
    // Deregistration is collective too; ranks without a window (a failed registration) sit out.
    Status s = n.grouped("ncclCommWindowDeregister", [&](int r, int) {
      return n.windows[r] ? n.windowDeregister(n.comms[r], n.windows[r]) : NcclResult{0};
    });
    if (!s.isOk()) GPUPEER_WARN("releasing NCCL windows: {}", s.toString());
  }
  int previous = 0;
  cudaGetDevice(&previous);
  for (std::size_t r = 0; r < n.windowBuffers.size(); ++r) {
    if (!n.windowBuffers[r]) continue;
    cudaSetDevice(n.devices[r]);
    if (Status s = n.check(n.memFree(n.windowBuffers[r]), "ncclMemFree"); !s.isOk())
      GPUPEER_WARN("freeing the NCCL window of device {}: {}", n.devices[r], s.toString());
  }
  cudaSetDevice(previous);
  n.windowBuffers.clear();
  n.windows.clear();
}

}  // namespace gpupeer
