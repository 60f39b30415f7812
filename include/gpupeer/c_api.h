#ifndef GPUPEER_C_API_H
#define GPUPEER_C_API_H
/// \file c_api.h
/// A stable C interface over libgpupeer, built as libgpupeer_c.so (libstdc++, the CUDA runtime
/// and RE2 linked in, so it needs only the driver). It is what the Python package calls through
/// ctypes, and what any other language can call: plain C types, no exceptions, no C++ objects.
///
/// Errors: every fallible function returns a gpupeer_code (GPUPEER_OK = 0) and, when it fails
/// and `error` is not null, stores a new error record in *error that the caller reads with the
/// gpupeer_error_* accessors and frees with gpupeer_error_free. The record belongs to that call
/// alone (no process-wide "last error"), so threads never see each other's failures. Success
/// allocates nothing.
///
/// Strings returned through `char** out` are malloc'ed, NUL-terminated and freed by the caller
/// with gpupeer_string_free.
///
/// Collectives take raw device pointers and a cudaStream_t passed as void*; enums are ints with
/// the values below, which src/c_api ties to the C++ enums at compile time. Handles take calls
/// from one thread at a time.

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Bumped when a function's signature or meaning changes; gpupeer_c_api_version() returns it.
#define GPUPEER_C_API_VERSION 1

/// gpupeer::ErrorCode.
typedef enum gpupeer_code {
  GPUPEER_OK = 0,
  GPUPEER_INVALID_ARGUMENT = 1,
  GPUPEER_NOT_FOUND = 2,
  GPUPEER_PARSE = 3,
  GPUPEER_UNSUPPORTED = 4,
  GPUPEER_CUDA = 5,
  GPUPEER_NVML = 6,
  GPUPEER_NCCL = 7,
  GPUPEER_SYSTEM = 8,
  GPUPEER_DATA_MISMATCH = 9,
  GPUPEER_TIMEOUT = 10,
  GPUPEER_INTERNAL = 11,
} gpupeer_code;

/// gpupeer::CollOp, DataType and RedOp.
enum {
  GPUPEER_ALL_REDUCE = 0,
  GPUPEER_ALL_GATHER = 1,
  GPUPEER_REDUCE_SCATTER = 2,
  GPUPEER_BROADCAST = 3,
  GPUPEER_REDUCE = 4,
  GPUPEER_ALL_TO_ALL = 5,
  GPUPEER_SEND_RECV = 6,
};
enum {
  GPUPEER_FLOAT32 = 0,
  GPUPEER_FLOAT16 = 1,
  GPUPEER_BFLOAT16 = 2,
  GPUPEER_FLOAT64 = 3,
  GPUPEER_INT8 = 4,
  GPUPEER_UINT8 = 5,
  GPUPEER_INT32 = 6,
  GPUPEER_INT64 = 7,
  GPUPEER_FLOAT8_E4M3 = 8,
  GPUPEER_FLOAT8_E5M2 = 9,
};
enum { GPUPEER_SUM = 0, GPUPEER_PROD = 1, GPUPEER_MIN = 2, GPUPEER_MAX = 3, GPUPEER_AVG = 4 };

/// The most GPUs one gpupeer_comm drives (gpupeer::kMaxCommRanks).
#define GPUPEER_MAX_COMM_RANKS 8

/// One failure: code, message, the whole Status as one line, the API error name
/// ("cudaErrorPeerAccessUnsupported"), the KB id that explains it, the call and location.
typedef struct gpupeer_error gpupeer_error;
int gpupeer_error_code(const gpupeer_error* error);
const char* gpupeer_error_code_name(const gpupeer_error* error);  ///< "invalid-argument", ...
const char* gpupeer_error_message(const gpupeer_error* error);
const char* gpupeer_error_text(const gpupeer_error* error);  ///< Status::toString()
const char* gpupeer_error_api_name(const gpupeer_error* error);
const char* gpupeer_error_api_text(const gpupeer_error* error);
const char* gpupeer_error_kb_id(const gpupeer_error* error);
const char* gpupeer_error_call(const gpupeer_error* error);
const char* gpupeer_error_location(const gpupeer_error* error);
void gpupeer_error_free(gpupeer_error* error);

void gpupeer_string_free(char* text);
int gpupeer_c_api_version(void);
const char* gpupeer_version(void);  ///< the library's version, "0.1.0"

// ---- Machine and diagnosis. Snapshot source: `snapshot_path` (a file from `gpupeer snapshot
// -o`), else `snapshot_json` (its text), else the machine is probed. `format` picks the CLI's
// --json document (GPUPEER_FORMAT_JSON) or its text for people (GPUPEER_FORMAT_TEXT).

enum { GPUPEER_FORMAT_JSON = 0, GPUPEER_FORMAT_TEXT = 1 };
/// gpupeer_doctor's *worst: gpupeer::Severity, or one of the two answers that are not one.
enum {
  GPUPEER_DOCTOR_NO_GPU = -2,
  GPUPEER_DOCTOR_NO_FINDING = -1,
  GPUPEER_SEVERITY_INFO = 0,
  GPUPEER_SEVERITY_WARNING = 1,
  GPUPEER_SEVERITY_ERROR = 2,
};

/// The snapshot (probed, or parsed and checked from the file or text) as JSON.
int gpupeer_snapshot_json(const char* snapshot_path, const char* snapshot_json, char** out, gpupeer_error** error);
/// What `gpupeer snapshot` prints without --json: a few lines on the host, versions and GPUs.
int gpupeer_snapshot_text(const char* snapshot_path, const char* snapshot_json, char** out, gpupeer_error** error);
/// `gpupeer topo`. GPUPEER_UNSUPPORTED when the snapshot has no GPU (the message says why).
int gpupeer_topology(const char* snapshot_path, const char* snapshot_json, int format, char** out,
                     gpupeer_error** error);
/// `gpupeer check` over `devices` (null: every GPU); `large_bytes` 0 means 32 MiB. *failed
/// (when not null): how many pair and method checks failed.
int gpupeer_check(const int* devices, int device_count, size_t large_bytes, int format, char** out, int* failed,
                  gpupeer_error** error);
/// `gpupeer check --ipc`: whether a second process can share memory of the first GPU of `devices`
/// (null: GPU 0), by CUDA IPC handle and by cuMem file descriptor (the second process is this
/// program started again, with this library in LD_PRELOAD). GPUPEER_UNSUPPORTED when no GPU is
/// visible, its message what the CLI says then (the reason, a line per obstacle of the process's
/// surroundings). *failed (when not null): how many ways of sharing failed.
int gpupeer_check_ipc(const int* devices, int device_count, int format, char** out, int* failed, gpupeer_error** error);
/// `gpupeer doctor`. GPU actions (data check, bandwidth) run when `gpu_actions` is non-zero and
/// the snapshot was probed. *worst (when not null): GPUPEER_SEVERITY_ERROR when a finding is an
/// error, else GPUPEER_DOCTOR_NO_GPU when the snapshot has no GPU (the CLI exits 3), else
/// GPUPEER_DOCTOR_NO_FINDING, else the worst severity (info or warning): the CLI's exit code
/// follows it (doctorExitCode).
int gpupeer_doctor(const char* snapshot_path, const char* snapshot_json, int gpu_actions, int format, char** out,
                   int* worst, gpupeer_error** error);
/// `gpupeer explain`: `text`, else the log file `log_path`, scanned against the built-in KB plus
/// `kb_dirs` (`kb_dir_count` directories), with the tool outputs pasted in it read in the same
/// pass; at most `top` matches shown (0: all). *matches (when not null): how many entries
/// matched plus how many tool outputs were recognised (0: explain's exit 1).
int gpupeer_explain(const char* text, const char* log_path, const char* const* kb_dirs, int kb_dir_count, size_t top,
                    int format, char** out, size_t* matches, gpupeer_error** error);
/// `gpupeer report`: the self-contained HTML page of the snapshot and of the results files
/// `results` (`result_count` paths: `gpupeer bench --json` lines, `gpupeer coll` JSON documents,
/// results records; read before the snapshot, a file that cannot be read is the error), titled
/// `title` (null or "": "gpupeer report: <host>"), with `generated_by` as its footer line.
/// *warnings (when not null): the results lines that were skipped, one a line (free it with
/// gpupeer_string_free). counts (when not null, 4 entries): GPUs, bench results, collective
/// tables and records on the page.
int gpupeer_report(const char* snapshot_path, const char* snapshot_json, const char* const* results, int result_count,
                   const char* title, const char* generated_by, char** out, char** warnings, size_t* counts,
                   gpupeer_error** error);

/// Writes `bytes` bytes of `data` to the file `path` as `gpupeer snapshot -o` and `report -o` do
/// (one writer, src/core/output_file.cpp): a regular file is replaced whole through a temporary
/// file beside it, keeping its mode; a FIFO or a device is written where it is; a file the user
/// may not write is refused; an empty name or a folder is GPUPEER_INVALID_ARGUMENT.
int gpupeer_write_output_file(const char* path, const char* data, size_t bytes, gpupeer_error** error);

/// The device ordinal that owns `pointer` (device or managed memory) in *device, -1 for host
/// memory; for arrays that do not say which GPU they live on (__cuda_array_interface__).
int gpupeer_pointer_device(const void* pointer, int* device, gpupeer_error** error);

// ---- Collectives of both kinds of communicator.
/// Elements of one rank's send buffer (*in) and receive buffer (*out) for `op` with `count`
/// elements per rank (the count gpupeer_comm_run and gpupeer_rank_comm_run take) over `ranks`
/// ranks: reduce-scatter and all-to-all send ranks x count, all-gather and all-to-all receive
/// ranks x count, the others count both. Pure; GPUPEER_INVALID_ARGUMENT for an unknown `op`,
/// `ranks` below 1 or a product past SIZE_MAX.
int gpupeer_collective_elements(int op, size_t count, int ranks, size_t* in, size_t* out, gpupeer_error** error);

// ---- One process, several GPUs (gpupeer::Communicator). Arrays hold one entry per rank.

typedef struct gpupeer_comm gpupeer_comm;
int gpupeer_comm_create(const int* devices, int device_count, gpupeer_comm** comm, gpupeer_error** error);
void gpupeer_comm_destroy(gpupeer_comm* comm);
int gpupeer_comm_ranks(const gpupeer_comm* comm);
int gpupeer_comm_device(const gpupeer_comm* comm, int rank);
const char* gpupeer_comm_transport(const gpupeer_comm* comm);
/// Communicator::run: `op` GPUPEER_ALL_REDUCE..GPUPEER_SEND_RECV; `redop` and `root` ignored
/// where they do not apply.
int gpupeer_comm_run(gpupeer_comm* comm, int op, const void* const* send, void* const* recv, size_t count, int type,
                     int redop, int root, void* const* streams, gpupeer_error** error);
int gpupeer_comm_check_barriers(gpupeer_comm* comm, gpupeer_error** error);

// ---- One process per GPU (gpupeer::RankCommunicator).

#define GPUPEER_UNIQUE_ID_BYTES 128
/// Fills `id` (GPUPEER_UNIQUE_ID_BYTES bytes) with a fresh communicator id.
int gpupeer_get_unique_id(char* id, gpupeer_error** error);

typedef struct gpupeer_rank_comm gpupeer_rank_comm;
/// `device` -1: the calling thread's current device; `timeout_ms` <= 0: the default bound.
int gpupeer_rank_comm_init(int nranks, const char* id, int rank, int device, int timeout_ms, gpupeer_rank_comm** comm,
                           gpupeer_error** error);
/// Every rank's `blob` (`blob_bytes` each, the same on every rank) in rank order into `out`
/// (nranks x blob_bytes); returns 0, or non-zero with a message of at most 1023 bytes in
/// `message` (1024 bytes). The communicator calls it again for every buffer registration and
/// deregistration (collective, like start-up): `all_gather` and `user` must stay valid until
/// gpupeer_rank_comm_destroy.
typedef int (*gpupeer_all_gather_fn)(void* user, const char* blob, size_t blob_bytes, char* out, char* message);
int gpupeer_rank_comm_init_all_gather(int nranks, int rank, gpupeer_all_gather_fn all_gather, void* user, int device,
                                      int timeout_ms, gpupeer_rank_comm** comm, gpupeer_error** error);
void gpupeer_rank_comm_destroy(gpupeer_rank_comm* comm);
int gpupeer_rank_comm_rank(const gpupeer_rank_comm* comm);
int gpupeer_rank_comm_ranks(const gpupeer_rank_comm* comm);
int gpupeer_rank_comm_device(const gpupeer_rank_comm* comm);
const char* gpupeer_rank_comm_transport(const gpupeer_rank_comm* comm);
/// One collective (GPUPEER_ALL_REDUCE..GPUPEER_ALL_TO_ALL) on this rank's buffers.
int gpupeer_rank_comm_run(gpupeer_rank_comm* comm, int op, const void* send, void* recv, size_t count, int type,
                          int redop, int root, void* stream, gpupeer_error** error);
int gpupeer_rank_comm_send(gpupeer_rank_comm* comm, const void* buffer, size_t count, int type, int peer, void* stream,
                           gpupeer_error** error);
int gpupeer_rank_comm_recv(gpupeer_rank_comm* comm, void* buffer, size_t count, int type, int peer, void* stream,
                           gpupeer_error** error);
int gpupeer_rank_comm_group_start(gpupeer_rank_comm* comm, gpupeer_error** error);
int gpupeer_rank_comm_group_end(gpupeer_rank_comm* comm, gpupeer_error** error);
int gpupeer_rank_comm_check_error(gpupeer_rank_comm* comm, gpupeer_error** error);
void gpupeer_rank_comm_abort(gpupeer_rank_comm* comm);
/// RankCommunicator::registerBuffer / deregisterBuffer (collective: every rank, same order).
int gpupeer_rank_comm_register_buffer(gpupeer_rank_comm* comm, void* ptr, size_t bytes, gpupeer_error** error);
int gpupeer_rank_comm_deregister_buffer(gpupeer_rank_comm* comm, void* ptr, gpupeer_error** error);
/// How the peers reach the registration that starts at `ptr` (RankCommunicator::
/// registrationMechanism): "cuda-ipc", "cumem-fd", "same-process" or "none"; null where no live
/// registration starts there.
const char* gpupeer_rank_comm_registration_mechanism(const gpupeer_rank_comm* comm, const void* ptr);

/// Device memory that every rank of a communicator can register across processes (cuMem memory
/// made with the POSIX file descriptor handle type; gpupeer/shareable_memory.hpp), with the
/// signatures of PyTorch's CUDAPluggableAllocator, so that a torch.cuda.MemPool hands it out.
/// `stream` is not used. gpupeer_mem_alloc returns null where the memory cannot be had (the
/// reason goes to standard error); gpupeer_mem_free of any other pointer does nothing but say so.
void* gpupeer_mem_alloc(ptrdiff_t bytes, int device, void* stream);
void gpupeer_mem_free(void* ptr, ptrdiff_t bytes, int device, void* stream);

#ifdef __cplusplus
}
#endif

#endif  // GPUPEER_C_API_H
