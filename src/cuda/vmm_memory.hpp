#pragma once
// CUDA virtual-memory (cuMem) allocations that other processes can map: made here
// (ShareableAllocation: the allocator behind gpupeer_mem_alloc and torch MemPools), found behind
// a user's pointer and exported as POSIX file descriptors (exportSegments: PyTorch's
// expandable segments, ncclMemAlloc, cuMem allocators), and mapped from such descriptors
// (ImportedSegments). cudaIpcGetMemHandle cannot export any of them. The driver API comes
// through the runtime's entry points, so nothing links libcuda. Internal.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/unique_fd.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer::vmm {

/// Whether this driver offers the cuMem calls used here; the reason where not.
Status available();

/// `chunks` physical allocations of `device` (cuMemCreate, exportable as POSIX file
/// descriptors), mapped back to back in one reservation, readable and writable by `device`.
class ShareableAllocation {
 public:
  /// `bytes` rounded up to the allocation granularity, in chunks of `chunkBytes` (rounded up
  /// likewise; 0: one chunk), as PyTorch's expandable segments map theirs.
  static Result<std::unique_ptr<ShareableAllocation>> create(int device, std::size_t bytes, std::size_t chunkBytes = 0);
  ShareableAllocation(const ShareableAllocation&) = delete;
  ShareableAllocation& operator=(const ShareableAllocation&) = delete;
  ~ShareableAllocation();
  void* get() const { return reinterpret_cast<void*>(base_); }
  std::size_t bytes() const { return bytes_; }
  int device() const { return device_; }

 private:
  ShareableAllocation() = default;
  std::uintptr_t base_ = 0;
  std::size_t bytes_ = 0;
  int device_ = -1;
  std::vector<std::pair<unsigned long long, std::size_t>> chunks_;  // handle, bytes; in address order
  std::size_t mapped_ = 0;                                          // chunks mapped so far
};

/// One physical allocation behind a range, exported.
struct ExportedSegment {
  std::uintptr_t base = 0;  ///< where it is mapped in this process
  std::size_t bytes = 0;
  UniqueFd fd;  ///< its POSIX file descriptor (cuMemExportToShareableHandle)
};

/// The most physical allocations one range may span: each costs a descriptor in flight to
/// every peer, which the open-file limit (often 1024) bounds, and a mapping (256 of PyTorch's
/// 20 MiB expandable-segment pages are 5 GiB).
inline constexpr std::size_t kMaxSegments = 256;

/// The physical allocations that [p, p + bytes) of `device` spans, in address order, each
/// exported; an error that says why not (memory that is not cuMem's, allocated without the
/// POSIX file descriptor handle type, or spread over more than kMaxSegments).
Result<std::vector<ExportedSegment>> exportSegments(int device, const void* p, std::size_t bytes);

/// Lets `peerDevice` read and write [base, base + bytes) of this process's cuMem memory (ranks
/// that are threads of one process use the owner's pointer; peer access does not cover cuMem).
Status grantAccess(std::uintptr_t base, std::size_t bytes, int peerDevice);

/// Another process's segments, imported from their descriptors and mapped back to back here for
/// `device`; unmapped when destroyed.
class ImportedSegments {
 public:
  ImportedSegments() = default;
  ImportedSegments(const ImportedSegments&) = delete;
  ImportedSegments& operator=(const ImportedSegments&) = delete;
  ~ImportedSegments();
  /// `fds[k]` is segment k of `bytes[k]` bytes.
  Status map(int device, const std::vector<UniqueFd>& fds, const std::vector<std::size_t>& bytes);
  void* get() const { return reinterpret_cast<void*>(base_); }

 private:
  std::uintptr_t base_ = 0;
  std::size_t reserved_ = 0;
  int device_ = -1;
  std::vector<std::pair<unsigned long long, std::size_t>> handles_;  // imported, mapped in order
  std::size_t mapped_ = 0;
};

}  // namespace gpupeer::vmm
