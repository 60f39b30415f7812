// Machine and diagnosis through the C API: the CLI's --json documents and its text reports,
// from the same library functions the CLI calls.
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "c_api_error.hpp"
#include "core/output_file.hpp"
#include "gpupeer/doctor.hpp"
#include "gpupeer/explain.hpp"
#include "gpupeer/ipc_check.hpp"
#include "gpupeer/kb.hpp"
#include "gpupeer/log.hpp"
#include "gpupeer/peer_check.hpp"
#include "gpupeer/probe.hpp"
#include "gpupeer/report.hpp"
#include "gpupeer/snapshot_json.hpp"
#include "gpupeer/topology.hpp"
#include "snapshot/snapshot_summary.hpp"

namespace gpupeer::capi {
namespace {

bool given(const char* text) { return text != nullptr && *text != '\0'; }

/// The snapshot from the file, else from the JSON text, else probed from the machine.
Result<Snapshot> snapshotFrom(const char* path, const char* json) {
  if (given(path)) return loadSnapshotFile(path);
  if (given(json)) return snapshotFromJson(json, "<snapshot>");
  if (!builtWithCuda())
    return GPUPEER_ERROR(ErrorCode::kUnsupported,
                         std::string(kBuiltWithoutCuda) + ": reading the machine needs a GPU build; give a snapshot");
  return probeMachine();
}

Status noGpu(const Snapshot& s) {
  return GPUPEER_ERROR(ErrorCode::kUnsupported, "no NVIDIA GPU visible: " + whyNoGpu(s));
}

Status checkFormat(int format) {
  if (format == GPUPEER_FORMAT_JSON || format == GPUPEER_FORMAT_TEXT) return Status::ok();
  return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("format: {} is neither JSON (0) nor text (1)", format));
}

struct Explained {
  std::string document;
  std::size_t matches = 0;
};

Result<Explained> explain(const char* text, const char* logPath, const char* const* kbDirs, int kbDirCount,
                          std::size_t top, int format) {
  if (given(text) == given(logPath))
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "give either the error text or a log file, not both or neither");
  if (kbDirCount < 0 || (kbDirCount > 0 && !kbDirs))
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "kb_dirs: a list of kb_dir_count directories");
  if (std::error_code ec; given(logPath) && std::filesystem::is_directory(logPath, ec))
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("'{}' is a folder; give a log file", logPath));
  // As `gpupeer explain`: GPUPEER_KB_PATH's folders that do not exist are a warning each (a stale
  // entry in the variable), the folders given here must exist.
  std::vector<std::string> skipped;
  std::vector<std::string> dirs = KnowledgeBase::existingDefaultDirectories(&skipped);
  for (const std::string& w : skipped) GPUPEER_WARN("{}", w);
  for (int i = 0; i < kbDirCount; ++i) dirs.emplace_back(kbDirs[i] ? kbDirs[i] : "");
  std::vector<std::string> warnings;
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories(dirs, &warnings);
  for (const std::string& w : warnings) GPUPEER_WARN("KB: {}", w);
  if (!kb.isOk()) return kb.status();
  Result<Explanation> explained = Explanation{};
  if (given(text)) {
    explained = explainText(kb.value(), text);
  } else {
    std::ifstream in(logPath, std::ios::binary);
    if (!in)
      return GPUPEER_ERROR(ErrorCode::kNotFound, fmt::format("cannot open '{}': {}", logPath, std::strerror(errno)));
    explained = explainStream(kb.value(), in);
  }
  if (!explained.isOk()) return explained.status();
  const Explanation& x = explained.value();
  Explained e;
  e.matches = x.scan.matches.size() + x.tools.size();
  e.document = format == GPUPEER_FORMAT_JSON ? explanationToJson(x, top) : renderExplanationText(x, top);
  return e;
}

}  // namespace
}  // namespace gpupeer::capi

using namespace gpupeer;
using capi::fail;
using capi::giveString;
using capi::guarded;

extern "C" {

int gpupeer_snapshot_json(const char* snapshot_path, const char* snapshot_json, char** out, gpupeer_error** error) {
  return guarded(error, [&] {
    Result<Snapshot> s = capi::snapshotFrom(snapshot_path, snapshot_json);
    if (!s.isOk()) return fail(s.status(), error);
    return giveString(snapshotToJson(s.value()), out, error);
  });
}

int gpupeer_snapshot_text(const char* snapshot_path, const char* snapshot_json, char** out, gpupeer_error** error) {
  return guarded(error, [&] {
    Result<Snapshot> s = capi::snapshotFrom(snapshot_path, snapshot_json);
    if (!s.isOk()) return fail(s.status(), error);
    return giveString(renderSnapshotSummary(s.value()), out, error);
  });
}

int gpupeer_topology(const char* snapshot_path, const char* snapshot_json, int format, char** out,
                     gpupeer_error** error) {
  return guarded(error, [&] {
    if (Status f = capi::checkFormat(format); !f.isOk()) return fail(f, error);
    Result<Snapshot> s = capi::snapshotFrom(snapshot_path, snapshot_json);
    if (!s.isOk()) return fail(s.status(), error);
    if (s.value().gpus.empty()) return fail(capi::noGpu(s.value()), error);
    return giveString(format == GPUPEER_FORMAT_JSON ? topologyToJson(s.value()) : renderTopology(s.value()), out,
                      error);
  });
}

int gpupeer_check(const int* devices, int device_count, size_t large_bytes, int format, char** out, int* failed,
                  gpupeer_error** error) {
  return guarded(error, [&] {
    if (Status f = capi::checkFormat(format); !f.isOk()) return fail(f, error);
    if (device_count < 0 || (device_count > 0 && !devices))
      return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, "devices: a list of device_count ordinals"), error);
    if (!builtWithCuda())
      return fail(GPUPEER_ERROR(ErrorCode::kUnsupported, std::string(kBuiltWithoutCuda) + ": check needs a GPU build"),
                  error);
    Snapshot s = probeMachine();
    if (s.gpus.empty()) return fail(capi::noGpu(s), error);
    CheckOptions options;
    if (large_bytes != 0) options.largeBytes = large_bytes;
    for (int i = 0; i < device_count; ++i) {
      if (devices[i] < 0 || devices[i] >= static_cast<int>(s.gpus.size()))
        return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                                  fmt::format("devices: GPU{} does not exist ({} visible)", devices[i], s.gpus.size())),
                    error);
      options.devices.push_back(devices[i]);
    }
    Result<CheckReport> report = runPeerCheck(s, options);
    if (!report.isOk()) return fail(report.status(), error);
    if (failed) *failed = report.value().count(CheckOutcome::kFail);
    return giveString(
        format == GPUPEER_FORMAT_JSON ? checkReportToJson(report.value()) : renderCheckReport(report.value()), out,
        error);
  });
}

int gpupeer_check_ipc(const int* devices, int device_count, int format, char** out, int* failed,
                      gpupeer_error** error) {
  return guarded(error, [&] {
    if (Status f = capi::checkFormat(format); !f.isOk()) return fail(f, error);
    if (device_count < 0 || (device_count > 0 && !devices))
      return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, "devices: a list of device_count ordinals"), error);
    // The list in the CLI's form, checked by the CLI's reader: the same words for the same list.
    std::string list;
    for (int i = 0; i < device_count; ++i) list += (i ? "," : "") + std::to_string(devices[i]);
    if (!list.empty())
      if (auto form = parseDeviceList(list, 1 << 20); !form.isOk()) return fail(form.status(), error);
    Snapshot s = probeMachine();
    if (s.gpus.empty()) {
      std::string why = renderIpcNoGpu(s);
      why.pop_back();  // the last newline: a message is a line or lines, not a document
      return fail(GPUPEER_ERROR(ErrorCode::kUnsupported, why), error);
    }
    int device = 0;
    if (!list.empty()) {
      Result<std::vector<int>> checked = parseDeviceList(list, static_cast<int>(s.gpus.size()));
      if (!checked.isOk()) return fail(checked.status(), error);
      device = checked.value().front();
    }
    Result<IpcCheckReport> report = runIpcCheck(s, device);
    if (!report.isOk()) return fail(report.status(), error);
    if (failed) *failed = report.value().count(CheckOutcome::kFail);
    return giveString(
        format == GPUPEER_FORMAT_JSON ? ipcCheckReportToJson(report.value()) : renderIpcCheckReport(report.value()),
        out, error);
  });
}

int gpupeer_write_output_file(const char* path, const char* data, size_t bytes, gpupeer_error** error) {
  return guarded(error, [&] {
    if (!data && bytes > 0) return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, "data: null"), error);
    return capi::finish(writeOutputFile(path ? path : "", std::string_view(data ? data : "", bytes)), error);
  });
}

int gpupeer_doctor(const char* snapshot_path, const char* snapshot_json, int gpu_actions, int format, char** out,
                   int* worst, gpupeer_error** error) {
  return guarded(error, [&] {
    if (Status f = capi::checkFormat(format); !f.isOk()) return fail(f, error);
    auto start = std::chrono::steady_clock::now();
    Result<Snapshot> s = capi::snapshotFrom(snapshot_path, snapshot_json);
    if (!s.isOk()) return fail(s.status(), error);
    bool probed = !capi::given(snapshot_path) && !capi::given(snapshot_json);
    bool measure = probed && gpu_actions != 0;
    Measurements measured;
    if (measure) measured = measureForDoctor(s.value());
    DoctorReport report = diagnose(s.value(), measure ? &measured : nullptr);
    if (probed && !measure) report.notRun = {"GPU actions (--no-gpu-actions)"};
    if (worst) {
      // doctorExitCode decides the order (an error first, then no GPU, then the worst severity).
      const int severity = report.findings.empty() ? GPUPEER_DOCTOR_NO_FINDING : static_cast<int>(report.worst());
      *worst = doctorExitCode(s.value(), report) == 3 ? GPUPEER_DOCTOR_NO_GPU : severity;
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const Measurements* m = measure ? &measured : nullptr;
    return giveString(format == GPUPEER_FORMAT_JSON ? doctorReportToJson(report, m)
                                                    : renderDoctorReport(s.value(), report, m, seconds),
                      out, error);
  });
}

int gpupeer_explain(const char* text, const char* log_path, const char* const* kb_dirs, int kb_dir_count, size_t top,
                    int format, char** out, size_t* matches, gpupeer_error** error) {
  return guarded(error, [&] {
    if (Status f = capi::checkFormat(format); !f.isOk()) return fail(f, error);
    Result<capi::Explained> e = capi::explain(text, log_path, kb_dirs, kb_dir_count, top, format);
    if (!e.isOk()) return fail(e.status(), error);
    if (matches) *matches = e.value().matches;
    return giveString(e.value().document, out, error);
  });
}

int gpupeer_report(const char* snapshot_path, const char* snapshot_json, const char* const* results, int result_count,
                   const char* title, const char* generated_by, char** out, char** warnings, size_t* counts,
                   gpupeer_error** error) {
  return guarded(error, [&] {
    if (result_count < 0 || (result_count > 0 && !results))
      return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, "results: a list of result_count paths"), error);
    // As `gpupeer report`: the results first, so that a wrong name is refused before the machine
    // is probed.
    ReportResults loaded;
    for (int i = 0; i < result_count; ++i)
      if (Status st = loadReportResults(results[i] ? results[i] : "", loaded); !st.isOk()) return fail(st, error);
    Result<Snapshot> s = capi::snapshotFrom(snapshot_path, snapshot_json);
    if (!s.isOk()) return fail(s.status(), error);
    ReportInput input;
    input.snapshot = &s.value();
    input.results = &loaded;
    input.title = title ? title : "";
    input.generatedBy = generated_by ? generated_by : "";
    if (counts) {
      counts[0] = s.value().gpus.size();
      counts[1] = loaded.bench.size();
      counts[2] = loaded.collectives.size();
      counts[3] = loaded.records.size();
    }
    int code = giveString(renderHtmlReport(input), out, error);
    if (code != 0 || !warnings) return code;
    std::string skipped;
    for (const std::string& w : loaded.warnings) skipped += w + "\n";
    code = giveString(skipped, warnings, error);
    if (code != 0) {  // all or nothing: the page is not handed out alone
      gpupeer_string_free(*out);
      *out = nullptr;
    }
    return code;
  });
}

}  // extern "C"
