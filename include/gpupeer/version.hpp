#pragma once
/// \file version.hpp
/// The library's version (the CMake project version; the package config checks it too).
namespace gpupeer {
/// "major.minor.patch"; static data.
inline constexpr const char* kVersion = "0.1.0";
}  // namespace gpupeer
