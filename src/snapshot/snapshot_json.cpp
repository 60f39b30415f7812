#include "gpupeer/snapshot_json.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/bounded_input.hpp"
#include "core/json_fields.hpp"

namespace gpupeer {
namespace {

using Json = nlohmann::ordered_json;

// ---- writing -------------------------------------------------------------------------

template <class T>
Json knownToJson(const Known<T>& k);

Json toJsonValue(const std::string& v) { return v; }
Json toJsonValue(int v) { return v; }
Json toJsonValue(std::int64_t v) { return v; }
Json toJsonValue(bool v) { return v; }

Json toJsonValue(const std::vector<NvLink>& links) {
  Json out = Json::array();
  for (const NvLink& l : links) {
    static const char* kRemote[] = {"gpu", "switch", "cpu", "unknown"};
    out.push_back({{"link", l.link},
                   {"active", l.active},
                   {"version", knownToJson(l.version)},
                   {"remoteType", kRemote[static_cast<int>(l.remoteType)]},
                   {"remoteBusId", knownToJson(l.remoteBusId)}});
  }
  return out;
}

Json toJsonValue(const std::vector<BridgeAcs>& bridges) {
  Json out = Json::array();
  for (const BridgeAcs& b : bridges) out.push_back({{"busId", b.busId}, {"acsControl", knownToJson(b.acsControl)}});
  return out;
}

Json toJsonValue(const std::vector<DeviceNode>& nodes) {
  Json out = Json::array();
  for (const DeviceNode& n : nodes) out.push_back({{"path", n.path}, {"access", n.access}});
  return out;
}

template <class T>
Json knownToJson(const Known<T>& k) {
  if (k.known()) return toJsonValue(k.value());
  return Json{{"unknown", k.reason()}};
}

// Optional fields are written only when the snapshot holds them (see kNotRecorded).
template <class T>
void putOptional(Json& obj, const char* key, const Known<T>& k) {
  if (!k.known() && k.reason() == kNotRecorded) return;
  obj[key] = knownToJson(k);
}

Json gpuRequiredFields(const Gpu& g) {
  return {{"index", g.index},
          {"name", g.name},
          {"uuid", knownToJson(g.uuid)},
          {"pciBusId", g.pciBusId},
          {"computeCapability", fmt::format("{}.{}", g.ccMajor, g.ccMinor)},
          {"memoryBytes", g.memoryBytes},
          {"smCount", g.smCount},
          {"migEnabled", knownToJson(g.migEnabled)},
          {"computeMode", knownToJson(g.computeMode)},
          {"numaNode", knownToJson(g.numaNode)},
          {"cpuAffinity", knownToJson(g.cpuAffinity)},
          {"sysfsPath", knownToJson(g.sysfsPath)},
          {"iommuGroupType", knownToJson(g.iommuGroupType)},
          {"pcie",
           {{"currentGen", knownToJson(g.pcie.currentGen)},
            {"maxGen", knownToJson(g.pcie.maxGen)},
            {"currentWidth", knownToJson(g.pcie.currentWidth)},
            {"maxWidth", knownToJson(g.pcie.maxWidth)}}},
          {"fabricState", knownToJson(g.fabricState)},
          {"nvlinks", knownToJson(g.nvlinks)}};
}

Json gpuToJson(const Gpu& g) {
  Json out = gpuRequiredFields(g);
  putOptional(out, "persistenceMode", g.persistenceMode);
  return out;
}

Json pairToJson(const PeerPair& p) {
  return {{"src", p.src},
          {"dst", p.dst},
          {"canAccessPeer", knownToJson(p.canAccessPeer)},
          {"performanceRank", knownToJson(p.performanceRank)},
          {"accessSupported", knownToJson(p.accessSupported)},
          {"nativeAtomics", knownToJson(p.nativeAtomics)},
          {"arrayAccess", knownToJson(p.arrayAccess)},
          {"nvmlP2pRead", knownToJson(p.nvmlP2pRead)},
          {"nvmlP2pWrite", knownToJson(p.nvmlP2pWrite)},
          {"pciPath", knownToJson(p.pciPath)}};
}

// ---- reading -------------------------------------------------------------------------

// Bounds of the integers a snapshot holds: anything outside is damage, not a machine.
constexpr int kMaxGpus = 128;  // GPU ordinals 0..127: no machine has more; bounds the pairs
constexpr int kMaxLinks = 63;
constexpr int kMaxNvLinkVersion = 15;
constexpr int kMaxPcieGen = 15;
constexpr int kMaxPcieWidth = 32;
constexpr int kMaxVersionNumber = 1'000'000;  // CUDA 13.0 is 13000, NCCL 2.28.3 is 22803

// Walks a JSON object, naming each field by its path for error messages.
class Reader {
 public:
  Reader(const Json& j, std::string path) : j_(j), path_(std::move(path)) {}

  const Json& field(const char* key) const {
    if (!j_.is_object()) throw JsonFieldError{path_, "expected an object"};
    auto it = j_.find(key);
    if (it == j_.end()) throw JsonFieldError{join(key), "missing field"};
    return *it;
  }
  bool has(const char* key) const { return j_.is_object() && j_.contains(key); }
  Reader child(const char* key) const { return Reader(field(key), join(key)); }
  std::string join(const char* key) const { return jsonFieldPath(path_, key); }
  const std::string& path() const { return path_; }
  const Json& json() const { return j_; }

  std::string str(const char* key) const { return as<std::string>(field(key), join(key)); }
  int integer(const char* key) const { return as<int>(field(key), join(key)); }
  bool boolean(const char* key) const { return as<bool>(field(key), join(key)); }

  template <class T>
  static T as(const Json& v, const std::string& path) {
    return jsonAs<T>(v, path);
  }

  /// known(), or unknown(kNotRecorded) when the key is absent.
  template <class T, class Parse>
  Known<T> optional(const char* key, Parse parse) const {
    if (!has(key)) return Known<T>::unknown(kNotRecorded);
    return known<T>(key, parse);
  }
  template <class T>
  Known<T> optional(const char* key) const {
    if (!has(key)) return Known<T>::unknown(kNotRecorded);
    return known<T>(key);
  }
  /// An integer from `lo` to `hi`: values outside make no sense for the field (a negative
  /// count, a PCIe generation of 99) and are refused with the field's path.
  int integer(const char* key, int lo, int hi) const { return inRange(integer(key), join(key), lo, hi); }
  Known<int> knownInt(const char* key, int lo, int hi) const {
    return known<int>(
        key, [lo, hi](const Json& v, const std::string& path) { return inRange(as<int>(v, path), path, lo, hi); });
  }
  static int inRange(int value, const std::string& path, int lo, int hi) { return jsonInRange(value, path, lo, hi); }

  template <class T>
  Known<T> known(const char* key) const {
    return known<T>(key, [](const Json& v, const std::string& path) { return as<T>(v, path); });
  }
  /// A value that may be {"unknown": reason}; otherwise read by `parse`.
  template <class T, class Parse>
  Known<T> known(const char* key, Parse parse) const {
    const Json& v = field(key);
    std::string path = join(key);
    if (v.is_object() && v.contains("unknown")) {
      return Known<T>::unknown(as<std::string>(v["unknown"], path + ".unknown"));
    }
    return parse(v, path);
  }

 private:
  const Json& j_;
  std::string path_;
};

std::vector<NvLink> parseLinks(const Json& v, const std::string& path) {
  if (!v.is_array()) throw JsonFieldError{path, "expected an array"};
  if (v.size() > kMaxLinks + 1)
    throw JsonFieldError{path, fmt::format("{} links: a GPU has at most {}", v.size(), kMaxLinks + 1)};
  std::vector<NvLink> out;
  for (size_t i = 0; i < v.size(); ++i) {
    Reader r(v[i], fmt::format("{}[{}]", path, i));
    NvLink l;
    l.link = r.integer("link", 0, kMaxLinks);
    l.active = r.boolean("active");
    l.version = r.knownInt("version", 1, kMaxNvLinkVersion);
    std::string remote = r.str("remoteType");
    if (remote == "gpu")
      l.remoteType = LinkRemote::kGpu;
    else if (remote == "switch")
      l.remoteType = LinkRemote::kSwitch;
    else if (remote == "cpu")
      l.remoteType = LinkRemote::kCpu;
    else if (remote == "unknown")
      l.remoteType = LinkRemote::kUnknown;
    else
      throw JsonFieldError{r.join("remoteType"), "expected gpu, switch, cpu or unknown"};
    l.remoteBusId = r.known<std::string>("remoteBusId");
    out.push_back(std::move(l));
  }
  return out;
}

std::vector<DeviceNode> parseDeviceNodes(const Json& v, const std::string& path) {
  if (!v.is_array()) throw JsonFieldError{path, "expected an array"};
  std::vector<DeviceNode> out;
  for (size_t i = 0; i < v.size(); ++i) {
    Reader r(v[i], fmt::format("{}[{}]", path, i));
    out.push_back({r.str("path"), r.str("access")});
  }
  return out;
}

std::vector<BridgeAcs> parseBridges(const Json& v, const std::string& path) {
  if (!v.is_array()) throw JsonFieldError{path, "expected an array"};
  std::vector<BridgeAcs> out;
  for (size_t i = 0; i < v.size(); ++i) {
    Reader r(v[i], fmt::format("{}[{}]", path, i));
    out.push_back({r.str("busId"), r.knownInt("acsControl", 0, 0xffff)});
  }
  return out;
}

Gpu parseGpu(const Reader& r) {
  Gpu g;
  g.index = r.integer("index", 0, kMaxGpus - 1);
  g.name = r.str("name");
  g.uuid = r.known<std::string>("uuid");
  g.pciBusId = r.str("pciBusId");
  std::string cc = r.str("computeCapability");
  if (std::sscanf(cc.c_str(), "%d.%d", &g.ccMajor, &g.ccMinor) != 2 || g.ccMajor < 1 || g.ccMajor > 99 ||
      g.ccMinor < 0 || g.ccMinor > 9)
    throw JsonFieldError{r.join("computeCapability"), "expected \"major.minor\""};
  const Json& mem = r.field("memoryBytes");
  if (!mem.is_number_integer()) throw JsonFieldError{r.join("memoryBytes"), "expected an integer"};
  if (!mem.is_number_unsigned() && mem.get<std::int64_t>() < 0)
    throw JsonFieldError{r.join("memoryBytes"), "expected a non-negative integer"};
  g.memoryBytes = mem.get<std::uint64_t>();
  g.smCount = r.integer("smCount", 0, 1 << 16);
  g.migEnabled = r.known<bool>("migEnabled");
  g.computeMode = r.known<std::string>("computeMode");
  g.numaNode = r.knownInt("numaNode", -1, 1 << 16);  // -1: sysfs's "none"
  g.cpuAffinity = r.known<std::string>("cpuAffinity");
  g.sysfsPath = r.known<std::string>("sysfsPath");
  g.iommuGroupType = r.known<std::string>("iommuGroupType");
  Reader pcie = r.child("pcie");
  g.pcie.currentGen = pcie.knownInt("currentGen", 1, kMaxPcieGen);
  g.pcie.maxGen = pcie.knownInt("maxGen", 1, kMaxPcieGen);
  g.pcie.currentWidth = pcie.knownInt("currentWidth", 1, kMaxPcieWidth);
  g.pcie.maxWidth = pcie.knownInt("maxWidth", 1, kMaxPcieWidth);
  g.fabricState = r.known<std::string>("fabricState");
  g.nvlinks = r.known<std::vector<NvLink>>("nvlinks", parseLinks);
  g.persistenceMode = r.optional<bool>("persistenceMode");
  return g;
}

PeerPair parsePair(const Reader& r) {
  PeerPair p;
  p.src = r.integer("src", 0, kMaxGpus - 1);
  p.dst = r.integer("dst", 0, kMaxGpus - 1);
  p.canAccessPeer = r.known<bool>("canAccessPeer");
  p.performanceRank = r.knownInt("performanceRank", 0, 1 << 16);
  p.accessSupported = r.known<bool>("accessSupported");
  p.nativeAtomics = r.known<bool>("nativeAtomics");
  p.arrayAccess = r.known<bool>("arrayAccess");
  p.nvmlP2pRead = r.known<std::string>("nvmlP2pRead");
  p.nvmlP2pWrite = r.known<std::string>("nvmlP2pWrite");
  p.pciPath = r.known<std::string>("pciPath");
  return p;
}

Snapshot parseSnapshot(const Json& root) {
  Reader r(root, "");
  if (r.str("schema") != "gpupeer.snapshot")
    throw JsonFieldError{"schema", "expected \"gpupeer.snapshot\": not a gpupeer snapshot"};
  Snapshot s;
  s.schemaVersion = r.integer("version");
  if (s.schemaVersion > kSnapshotSchemaVersion || s.schemaVersion < 1)
    throw JsonFieldError{"version", fmt::format("snapshot schema version {} is not supported by "
                                                "this gpupeer (it reads versions 1 to {}); "
                                                "upgrade gpupeer",
                                                s.schemaVersion, kSnapshotSchemaVersion)};
  s.capturedAt = r.str("capturedAt");
  s.hostname = r.str("hostname");
  s.description = r.str("description");
  s.driverVersion = r.known<std::string>("driverVersion");
  s.cudaDriverVersion = r.knownInt("cudaDriverVersion", 0, kMaxVersionNumber);
  s.cudaRuntimeVersion = r.knownInt("cudaRuntimeVersion", 0, kMaxVersionNumber);
  s.nvmlVersion = r.known<std::string>("nvmlVersion");
  s.ncclVersion = r.knownInt("ncclVersion", 0, kMaxVersionNumber);
  s.deviceCount = r.knownInt("deviceCount", 0, kMaxGpus);
  const Json& gpus = r.field("gpus");
  if (!gpus.is_array()) throw JsonFieldError{"gpus", "expected an array"};
  for (size_t i = 0; i < gpus.size(); ++i) s.gpus.push_back(parseGpu(Reader(gpus[i], fmt::format("gpus[{}]", i))));
  const Json& pairs = r.field("pairs");
  if (!pairs.is_array()) throw JsonFieldError{"pairs", "expected an array"};
  for (size_t i = 0; i < pairs.size(); ++i) s.pairs.push_back(parsePair(Reader(pairs[i], fmt::format("pairs[{}]", i))));
  Reader platform = r.child("platform");
  s.platform.iommu = platform.known<std::string>("iommu");
  s.platform.kernelCmdline = platform.known<std::string>("kernelCmdline");
  s.platform.acs = platform.known<std::vector<BridgeAcs>>("acs", parseBridges);
  s.platform.processCpuAffinity = platform.known<std::string>("processCpuAffinity");
  s.platform.cpuVendor = platform.optional<std::string>("cpuVendor");
  s.platform.container = platform.optional<std::string>("container");
  s.platform.ipcNamespace = platform.optional<std::string>("ipcNamespace");
  s.platform.pidNamespace = platform.optional<std::string>("pidNamespace");
  s.platform.devShmBytes = platform.optional<std::int64_t>("devShmBytes");
  s.platform.memlockBytes = platform.optional<std::int64_t>("memlockBytes");
  s.platform.ptraceScope = platform.optional<int>("ptraceScope");
  s.platform.capEff = platform.optional<std::string>("capEff");
  s.platform.deviceNodes = platform.optional<std::vector<DeviceNode>>("deviceNodes", parseDeviceNodes);
  const Json& env = r.field("environment");
  if (!env.is_object()) throw JsonFieldError{"environment", "expected an object"};
  for (auto it = env.begin(); it != env.end(); ++it)
    s.environment[it.key()] = Reader::as<std::string>(it.value(), "environment." + it.key());
  return s;
}

// Consistency the analyses rely on: unique ordinals, pairs that name known GPUs, each pair once.
// Sets, so that a large damaged file costs n log n, not n squared.
void checkConsistency(const Snapshot& s) {
  std::set<int> indices;
  for (size_t i = 0; i < s.gpus.size(); ++i)
    if (!indices.insert(s.gpus[i].index).second)
      throw JsonFieldError{fmt::format("gpus[{}].index", i), fmt::format("duplicate GPU index {}", s.gpus[i].index)};
  std::set<std::pair<int, int>> pairs;
  for (size_t i = 0; i < s.pairs.size(); ++i) {
    const PeerPair& p = s.pairs[i];
    if (!indices.count(p.src) || !indices.count(p.dst) || p.src == p.dst)
      throw JsonFieldError{fmt::format("pairs[{}]", i),
                           fmt::format("pair {}->{} does not name two different GPUs of the "
                                       "snapshot",
                                       p.src, p.dst)};
    if (!pairs.insert({p.src, p.dst}).second)
      throw JsonFieldError{fmt::format("pairs[{}]", i), fmt::format("pair {}->{} is listed twice", p.src, p.dst)};
  }
}

}  // namespace

std::string snapshotToJson(const Snapshot& s) {
  Json root;
  root["schema"] = "gpupeer.snapshot";
  root["version"] = s.schemaVersion;
  root["capturedAt"] = s.capturedAt;
  root["hostname"] = s.hostname;
  root["description"] = s.description;
  root["driverVersion"] = knownToJson(s.driverVersion);
  root["cudaDriverVersion"] = knownToJson(s.cudaDriverVersion);
  root["cudaRuntimeVersion"] = knownToJson(s.cudaRuntimeVersion);
  root["nvmlVersion"] = knownToJson(s.nvmlVersion);
  root["ncclVersion"] = knownToJson(s.ncclVersion);
  root["deviceCount"] = knownToJson(s.deviceCount);
  root["gpus"] = Json::array();
  for (const Gpu& g : s.gpus) root["gpus"].push_back(gpuToJson(g));
  root["pairs"] = Json::array();
  for (const PeerPair& p : s.pairs) root["pairs"].push_back(pairToJson(p));
  root["platform"] = {{"iommu", knownToJson(s.platform.iommu)},
                      {"kernelCmdline", knownToJson(s.platform.kernelCmdline)},
                      {"acs", knownToJson(s.platform.acs)},
                      {"processCpuAffinity", knownToJson(s.platform.processCpuAffinity)}};
  Json& platform = root["platform"];
  putOptional(platform, "cpuVendor", s.platform.cpuVendor);
  putOptional(platform, "container", s.platform.container);
  putOptional(platform, "ipcNamespace", s.platform.ipcNamespace);
  putOptional(platform, "pidNamespace", s.platform.pidNamespace);
  putOptional(platform, "devShmBytes", s.platform.devShmBytes);
  putOptional(platform, "memlockBytes", s.platform.memlockBytes);
  putOptional(platform, "ptraceScope", s.platform.ptraceScope);
  putOptional(platform, "capEff", s.platform.capEff);
  putOptional(platform, "deviceNodes", s.platform.deviceNodes);
  root["environment"] = Json::object();
  for (const auto& [k, v] : s.environment) root["environment"][k] = v;
  return dumpJson(root, 2) + "\n";
}

Result<Snapshot> snapshotFromJson(std::string_view text, std::string_view sourceName) {
  Result<Json> parsed = parseJsonText<Json>(text, sourceName);
  if (!parsed.isOk()) return parsed.status();
  const Json& root = parsed.value();
  try {
    Snapshot s = parseSnapshot(root);
    checkConsistency(s);
    return s;
  } catch (const JsonFieldError& e) {
    return GPUPEER_ERROR(ErrorCode::kParse,
                         fmt::format("{}: field '{}': {}", sourceName, e.path.empty() ? "(top)" : e.path, e.message));
  } catch (const Json::exception& e) {
    return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("{}: {}", sourceName, e.what()));
  }
}

Result<Snapshot> loadSnapshotFile(const std::string& path) {
  if (path.empty()) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "the snapshot file name is empty");
  Result<std::string> text = readFileBounded(path, kMaxSnapshotBytes, "snapshot file");
  if (!text.isOk()) return text.status();
  return snapshotFromJson(text.value(), path);
}

}  // namespace gpupeer
