#pragma once
// Reading /sys and /proc under a root prefix (a fake tree in tests), and the pure parsers of
// what they hold.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpupeer/known.hpp"

namespace gpupeer::sysfs {

/// The first line of fsRoot + path, trailing newline removed; unknown with the OS reason.
Known<std::string> readLine(const std::string& fsRoot, const std::string& path);
/// The first line of fsRoot + path as a decimal integer; unknown with the OS reason or the text.
Known<int> readInt(const std::string& fsRoot, const std::string& path);
/// The whole file as bytes; unknown with the OS reason.
Known<std::string> readBytes(const std::string& fsRoot, const std::string& path);
/// realpath of fsRoot + path, with fsRoot removed again (so "/sys/devices/..." in tests too).
Known<std::string> resolve(const std::string& fsRoot, const std::string& path);
/// Names in a directory (no "." and ".."); unknown if it cannot be listed.
Known<std::vector<std::string>> list(const std::string& fsRoot, const std::string& path);

/// "16.0 GT/s PCIe" -> 4. nullopt for text it does not recognise.
std::optional<int> pcieGenFromSpeed(const std::string& speed);

/// The ACS Control register from a device's PCI config space bytes, by walking the
/// extended capability list from offset 0x100. nullopt: no ACS capability, or the bytes stop
/// at 256 (config space past 256 bytes is readable by root only).
std::optional<int> acsControlFromConfig(const std::string& config);

/// The CPU vendor from /proc/cpuinfo's text: the first "vendor_id" value on x86
/// ("GenuineIntel"), else "ARM implementer 0x41" from the first "CPU implementer" line on Arm;
/// nullopt when neither line is there.
std::optional<std::string> cpuVendorFromCpuinfo(const std::string& cpuinfo);

/// Bus ids of the bridges between the host bridge and the device, from its resolved path.
std::vector<std::string> bridgesOnPath(const std::string& sysfsPath);

/// "00000000:18:00.0" or "0000:18:00.0" -> "0000:18:00.0" (lower case, 4-digit domain).
std::string normalizeBusId(const std::string& busId);

}  // namespace gpupeer::sysfs
