#include "cuda/vmm_memory.hpp"

#include <cuda.h>
#include <fmt/format.h>

#include "cuda/cuda_status.hpp"
#include "cuda/device_guard.hpp"
#include "cuda/driver_entry.hpp"

namespace gpupeer::vmm {
namespace {

// The driver calls, loaded once.
struct Api {
  decltype(&cuMemCreate) create = nullptr;
  decltype(&cuMemRelease) release = nullptr;
  decltype(&cuMemAddressReserve) reserve = nullptr;
  decltype(&cuMemAddressFree) addressFree = nullptr;
  decltype(&cuMemMap) map = nullptr;
  decltype(&cuMemUnmap) unmap = nullptr;
  decltype(&cuMemSetAccess) setAccess = nullptr;
  decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&cuMemExportToShareableHandle) exportHandle = nullptr;
  decltype(&cuMemImportFromShareableHandle) importHandle = nullptr;
  decltype(&cuMemRetainAllocationHandle) retain = nullptr;
  decltype(&cuMemGetAllocationPropertiesFromHandle) properties = nullptr;
  decltype(&cuMemGetAddressRange) addressRange = nullptr;
  decltype(&cuGetErrorName) errorName = nullptr;
  bool complete = false;

  Api() {
    create = driverEntryPoint<decltype(create)>("cuMemCreate");
    release = driverEntryPoint<decltype(release)>("cuMemRelease");
    reserve = driverEntryPoint<decltype(reserve)>("cuMemAddressReserve");
    addressFree = driverEntryPoint<decltype(addressFree)>("cuMemAddressFree");
    map = driverEntryPoint<decltype(map)>("cuMemMap");
    unmap = driverEntryPoint<decltype(unmap)>("cuMemUnmap");
    setAccess = driverEntryPoint<decltype(setAccess)>("cuMemSetAccess");
    granularity = driverEntryPoint<decltype(granularity)>("cuMemGetAllocationGranularity");
    exportHandle = driverEntryPoint<decltype(exportHandle)>("cuMemExportToShareableHandle");
    importHandle = driverEntryPoint<decltype(importHandle)>("cuMemImportFromShareableHandle");
    retain = driverEntryPoint<decltype(retain)>("cuMemRetainAllocationHandle");
    properties = driverEntryPoint<decltype(properties)>("cuMemGetAllocationPropertiesFromHandle");
    addressRange = driverEntryPoint<decltype(addressRange)>("cuMemGetAddressRange");
    errorName = driverEntryPoint<decltype(errorName)>("cuGetErrorName");
    complete = create && release && reserve && addressFree && map && unmap && setAccess && granularity &&
               exportHandle && importHandle && retain && properties && addressRange && errorName;
  }
  std::string name(CUresult r) const {
    const char* n = nullptr;
    return errorName && errorName(r, &n) == CUDA_SUCCESS && n ? n : fmt::format("CUresult {}", static_cast<int>(r));
  }
};

const Api& api() {
  static const Api a;
  return a;
}

Status driverFailure(const char* call, CUresult r, int device) {
  return GPUPEER_ERROR(ErrorCode::kCuda, fmt::format("{} on GPU{}: {}", call, device, api().name(r)))
      .withCall(call)
      .withApiError(api().name(r), "");
}

CUmemAllocationProp deviceProperties(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

CUmemAccessDesc readWrite(int device) {
  CUmemAccessDesc desc{};
  desc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  desc.location.id = device;
  desc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return desc;
}

std::size_t roundUp(std::size_t bytes, std::size_t unit) { return (bytes + unit - 1) / unit * unit; }

// Undoes an address range that was built piece by piece: unmaps the first `mapped` pieces
// (handle, bytes; in address order from `base`), releases every piece's handle, and frees the
// `reserved` bytes. Pieces exist only once the range is reserved.
void undoRange(std::uintptr_t base, std::size_t reserved,
               const std::vector<std::pair<unsigned long long, std::size_t>>& pieces, std::size_t mapped) {
  if (!base) return;
  const Api& a = api();
  std::size_t at = 0;
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    if (k < mapped) a.unmap(base + at, pieces[k].second);
    a.release(pieces[k].first);
    at += pieces[k].second;
  }
  a.addressFree(base, reserved);
}

}  // namespace

Status available() {
  if (!api().complete)
    return GPUPEER_ERROR(ErrorCode::kUnsupported, "this driver does not offer CUDA's virtual memory (cuMem) calls");
  return Status::ok();
}

Result<std::unique_ptr<ShareableAllocation>> ShareableAllocation::create(int device, std::size_t bytes,
                                                                         std::size_t chunkBytes) {
  GPUPEER_RETURN_IF_ERROR(available());
  if (bytes == 0) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "an allocation of 0 bytes");
  DeviceGuard guard;  // the caller's current device is left as it was
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  const Api& a = api();
  CUmemAllocationProp prop = deviceProperties(device);
  std::size_t unit = 0;
  if (CUresult r = a.granularity(&unit, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM); r != CUDA_SUCCESS)
    return driverFailure("cuMemGetAllocationGranularity", r, device);
  std::unique_ptr<ShareableAllocation> m(new ShareableAllocation);
  m->device_ = device;
  m->bytes_ = roundUp(bytes, unit);
  const std::size_t chunk = chunkBytes ? std::min(roundUp(chunkBytes, unit), m->bytes_) : m->bytes_;
  CUdeviceptr base = 0;
  if (CUresult r = a.reserve(&base, m->bytes_, unit, 0, 0); r != CUDA_SUCCESS)
    return driverFailure("cuMemAddressReserve", r, device);
  m->base_ = static_cast<std::uintptr_t>(base);
  for (std::size_t at = 0; at < m->bytes_; at += chunk) {
    const std::size_t size = std::min(chunk, m->bytes_ - at);
    CUmemGenericAllocationHandle h{};
    if (CUresult r = a.create(&h, size, &prop, 0); r != CUDA_SUCCESS) return driverFailure("cuMemCreate", r, device);
    m->chunks_.push_back({h, size});
    if (CUresult r = a.map(base + at, size, 0, h, 0); r != CUDA_SUCCESS) return driverFailure("cuMemMap", r, device);
    ++m->mapped_;
  }
  const CUmemAccessDesc desc = readWrite(device);
  if (CUresult r = a.setAccess(base, m->bytes_, &desc, 1); r != CUDA_SUCCESS)
    return driverFailure("cuMemSetAccess", r, device);
  return m;
}

ShareableAllocation::~ShareableAllocation() { undoRange(base_, bytes_, chunks_, mapped_); }

Result<std::vector<ExportedSegment>> exportSegments(int device, const void* p, std::size_t bytes) {
  GPUPEER_RETURN_IF_ERROR(available());
  DeviceGuard guard;  // the caller's current device is left as it was
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  const Api& a = api();
  std::vector<ExportedSegment> out;
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(p) + bytes;
  for (std::uintptr_t at = reinterpret_cast<std::uintptr_t>(p); at < end;) {
    if (out.size() == kMaxSegments)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("buffer {} spans more than {} cuMem allocations", p, kMaxSegments));
    CUdeviceptr base = 0;
    std::size_t size = 0;
    if (CUresult r = a.addressRange(&base, &size, static_cast<CUdeviceptr>(at)); r != CUDA_SUCCESS || size == 0)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("buffer {}: no allocation at {:#x} ({})", p, at, api().name(r)));
    CUmemGenericAllocationHandle h{};
    if (CUresult r = a.retain(&h, reinterpret_cast<void*>(base)); r != CUDA_SUCCESS)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("buffer {} is neither from cudaMalloc nor from cuMemCreate (e.g. a "
                                       "stream-ordered pool's, cudaMallocAsync), so no other process can map it "
                                       "({})",
                                       p, api().name(r)));
    CUmemAllocationProp prop{};
    CUresult r = a.properties(&prop, h);
    ExportedSegment s;
    s.base = static_cast<std::uintptr_t>(base);
    s.bytes = size;
    int fd = -1;
    if (r == CUDA_SUCCESS && (prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
      r = a.exportHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    else if (r == CUDA_SUCCESS)
      r = CUDA_ERROR_NOT_SUPPORTED;
    a.release(h);  // the mapping keeps the allocation alive
    if (r != CUDA_SUCCESS)
      return GPUPEER_ERROR(
          ErrorCode::kInvalidArgument,
          fmt::format("buffer {} is cuMem memory made without CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR "
                      "in its requested handle types, so no other process can map it ({})",
                      p, api().name(r)));
    s.fd = UniqueFd(fd);
    out.push_back(std::move(s));
    at = static_cast<std::uintptr_t>(base) + size;
  }
  return out;
}

Status grantAccess(std::uintptr_t base, std::size_t bytes, int peerDevice) {
  GPUPEER_RETURN_IF_ERROR(available());
  const CUmemAccessDesc desc = readWrite(peerDevice);
  if (CUresult r = api().setAccess(static_cast<CUdeviceptr>(base), bytes, &desc, 1); r != CUDA_SUCCESS)
    return driverFailure("cuMemSetAccess", r, peerDevice);
  return Status::ok();
}

Status ImportedSegments::map(int device, const std::vector<UniqueFd>& fds, const std::vector<std::size_t>& bytes) {
  GPUPEER_RETURN_IF_ERROR(available());
  if (fds.empty() || fds.size() != bytes.size())
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("{} descriptors for {} segments", fds.size(), bytes.size()));
  DeviceGuard guard;  // the caller's current device is left as it was
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  const Api& a = api();
  device_ = device;
  for (std::size_t b : bytes) reserved_ += b;
  CUmemAllocationProp prop = deviceProperties(device);
  std::size_t unit = 0;
  if (CUresult r = a.granularity(&unit, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM); r != CUDA_SUCCESS)
    return driverFailure("cuMemGetAllocationGranularity", r, device);
  CUdeviceptr base = 0;
  if (CUresult r = a.reserve(&base, reserved_, unit, 0, 0); r != CUDA_SUCCESS) {
    reserved_ = 0;
    return driverFailure("cuMemAddressReserve", r, device);
  }
  base_ = static_cast<std::uintptr_t>(base);
  std::size_t at = 0;
  for (std::size_t k = 0; k < fds.size(); ++k) {
    CUmemGenericAllocationHandle h{};
    if (CUresult r = a.importHandle(&h, reinterpret_cast<void*>(static_cast<std::intptr_t>(fds[k].get())),
                                    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        r != CUDA_SUCCESS)
      return driverFailure("cuMemImportFromShareableHandle", r, device).withKbId("nccl/cumem-import-pidfd");
    handles_.push_back({h, bytes[k]});
    if (CUresult r = a.map(base + at, bytes[k], 0, h, 0); r != CUDA_SUCCESS)
      return driverFailure("cuMemMap of a peer's segment", r, device);
    ++mapped_;
    at += bytes[k];
  }
  const CUmemAccessDesc desc = readWrite(device);
  if (CUresult r = a.setAccess(base, reserved_, &desc, 1); r != CUDA_SUCCESS)
    return driverFailure("cuMemSetAccess", r, device);
  return Status::ok();
}

ImportedSegments::~ImportedSegments() { undoRange(base_, reserved_, handles_, mapped_); }

}  // namespace gpupeer::vmm
