#include "gpupeer/nccl_baseline.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

namespace gpupeer {
namespace {

// The part of nccl.h used here; values as in NCCL 2.x.
using NcclComm = struct ncclComm*;
using NcclResult = int;
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
  NcclResult (*allReduce)(const void*, void*, std::size_t, int, int, NcclComm, cudaStream_t) = nullptr;
  NcclResult (*groupStart)() = nullptr;
  NcclResult (*groupEnd)() = nullptr;
  NcclResult (*destroy)(NcclComm) = nullptr;
  const char* (*errorString)(NcclResult) = nullptr;
  NcclResult (*getVersion)(int*) = nullptr;
  std::vector<NcclComm> comms;

  Status check(NcclResult r, const char* call) const {
    if (r == 0) return Status::ok();
    Status s(ErrorCode::kNccl, errorString ? errorString(r) : fmt::format("NCCL error {}", r));
    return s.withCall(call)
        .withApiError(fmt::format("ncclResult {}", r), errorString ? errorString(r) : "")
        .withLocation(__FILE__, __LINE__);
  }
};

NcclBaseline::NcclBaseline(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

NcclBaseline::~NcclBaseline() {
  for (NcclComm c : impl_->comms)
    if (c && impl_->destroy) impl_->destroy(c);
}

Result<std::unique_ptr<NcclBaseline>> NcclBaseline::open(const std::vector<int>& devices) {
  auto impl = std::make_unique<Impl>();
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
  bind(impl->allReduce, "ncclAllReduce");
  bind(impl->groupStart, "ncclGroupStart");
  bind(impl->groupEnd, "ncclGroupEnd");
  bind(impl->destroy, "ncclCommDestroy");
  bind(impl->errorString, "ncclGetErrorString");
  bind(impl->getVersion, "ncclGetVersion");
  if (!impl->initAll || !impl->allReduce || !impl->groupStart || !impl->groupEnd)
    return GPUPEER_ERROR(ErrorCode::kUnsupported, "libnccl.so.2 lacks ncclCommInitAll/ncclAllReduce/ncclGroup*");
  impl->comms.assign(devices.size(), nullptr);
  GPUPEER_RETURN_IF_ERROR(impl->check(
      impl->initAll(impl->comms.data(), static_cast<int>(devices.size()), devices.data()), "ncclCommInitAll"));
  return std::unique_ptr<NcclBaseline>(new NcclBaseline(std::move(impl)));
}

std::string NcclBaseline::version() const {
  int v = 0;
  if (!impl_->getVersion || impl_->getVersion(&v) != 0) return "unknown";
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

Status NcclBaseline::allReduce(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                               DataType type, RedOp op, const std::vector<cudaStream_t>& streams) {
  GPUPEER_RETURN_IF_ERROR(impl_->check(impl_->groupStart(), "ncclGroupStart"));
  for (std::size_t r = 0; r < impl_->comms.size(); ++r) {
    NcclResult res =
        impl_->allReduce(send[r], recv[r], count, ncclTypeOf(type), ncclOpOf(op), impl_->comms[r], streams[r]);
    if (res != 0) {
      impl_->groupEnd();
      return impl_->check(res, "ncclAllReduce");
    }
  }
  return impl_->check(impl_->groupEnd(), "ncclGroupEnd");
}

}  // namespace gpupeer
