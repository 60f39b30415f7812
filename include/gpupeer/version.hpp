#pragma once
/// \file version.hpp
namespace gpupeer {
inline constexpr const char* kVersion = "0.1.0";
}  // namespace gpupeer
