#include "probe/sysfs.hpp"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gpupeer::sysfs {

Known<std::string> readBytes(const std::string& fsRoot, const std::string& path) {
  std::ifstream in(fsRoot + path, std::ios::binary);
  if (!in) return Known<std::string>::unknown(path + ": " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return Known<std::string>::unknown(path + ": read failed");
  return buffer.str();
}

Known<std::string> readLine(const std::string& fsRoot, const std::string& path) {
  Known<std::string> bytes = readBytes(fsRoot, path);
  if (!bytes.known()) return bytes;
  std::string line = bytes.value().substr(0, bytes.value().find('\n'));
  return line;
}

Known<int> readInt(const std::string& fsRoot, const std::string& path) {
  Known<std::string> line = readLine(fsRoot, path);
  if (!line.known()) return Known<int>::unknown(line.reason());
  try {
    return std::stoi(line.value());
  } catch (...) {
    return Known<int>::unknown(path + ": not a number: '" + line.value() + "'");
  }
}

Known<std::string> resolve(const std::string& fsRoot, const std::string& path) {
  char buffer[PATH_MAX];
  if (!realpath((fsRoot + path).c_str(), buffer))
    return Known<std::string>::unknown(path + ": " + std::strerror(errno));
  std::string resolved = buffer;
  if (!fsRoot.empty()) {
    char rootBuffer[PATH_MAX];
    std::string root = realpath(fsRoot.c_str(), rootBuffer) ? rootBuffer : fsRoot;
    if (resolved.rfind(root, 0) == 0) resolved = resolved.substr(root.size());
  }
  return resolved;
}

Known<std::vector<std::string>> list(const std::string& fsRoot, const std::string& path) {
  DIR* dir = opendir((fsRoot + path).c_str());
  if (!dir) return Known<std::vector<std::string>>::unknown(path + ": " + std::strerror(errno));
  std::vector<std::string> names;
  while (dirent* e = readdir(dir)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  return names;
}

std::optional<int> pcieGenFromSpeed(const std::string& speed) {
  double gts = 0;
  if (std::sscanf(speed.c_str(), "%lf GT/s", &gts) != 1) return std::nullopt;
  struct {
    double gts;
    int gen;
  } const kTable[] = {{2.5, 1}, {5.0, 2}, {8.0, 3}, {16.0, 4}, {32.0, 5}, {64.0, 6}};
  for (const auto& row : kTable)
    if (gts > row.gts - 0.1 && gts < row.gts + 0.1) return row.gen;
  return std::nullopt;
}

std::optional<int> acsControlFromConfig(const std::string& config) {
  auto u32 = [&](size_t off) -> uint32_t {
    return static_cast<uint8_t>(config[off]) | static_cast<uint8_t>(config[off + 1]) << 8 |
           static_cast<uint8_t>(config[off + 2]) << 16 |
           static_cast<uint32_t>(static_cast<uint8_t>(config[off + 3])) << 24;
  };
  constexpr uint32_t kAcsCapId = 0x000D;
  size_t offset = 0x100;
  // A well-formed list is short; the bound stops a corrupt one from looping.
  for (int hops = 0; hops < 64 && offset >= 0x100 && offset + 8 <= config.size(); ++hops) {
    uint32_t header = u32(offset);
    if (header == 0 || header == 0xffffffff) return std::nullopt;
    if ((header & 0xffff) == kAcsCapId) {
      return static_cast<uint8_t>(config[offset + 6]) | static_cast<uint8_t>(config[offset + 7]) << 8;
    }
    offset = (header >> 20) & 0xffc;
  }
  return std::nullopt;
}

namespace {

// The value of the first line "key<tabs or spaces>: value"; nullopt when no line has the key.
std::optional<std::string> cpuinfoValue(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    std::size_t colon = line.find(':', key.size());
    if (colon == std::string::npos || line.find_first_not_of(" \t", key.size()) != colon) continue;
    std::size_t b = line.find_first_not_of(" \t", colon + 1);
    std::size_t e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos || e < b) continue;
    return line.substr(b, e - b + 1);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> cpuVendorFromCpuinfo(const std::string& cpuinfo) {
  if (auto x86 = cpuinfoValue(cpuinfo, "vendor_id")) return x86;
  if (auto arm = cpuinfoValue(cpuinfo, "CPU implementer")) return "ARM implementer " + *arm;
  return std::nullopt;
}

std::vector<std::string> bridgesOnPath(const std::string& sysfsPath) {
  std::vector<std::string> parts;
  std::stringstream in(sysfsPath);
  for (std::string part; std::getline(in, part, '/');)
    if (part.size() == 12 && part[4] == ':' && part[7] == ':' && part[10] == '.') parts.push_back(part);
  if (!parts.empty()) parts.pop_back();  // the device itself
  return parts;
}

std::string normalizeBusId(const std::string& busId) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(busId.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) return busId;
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain & 0xffff, bus, device, function);
  return out;
}

}  // namespace gpupeer::sysfs
