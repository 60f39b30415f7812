#pragma once
// Where the running gpupeer code was loaded from, so that the data that came with it (the KB) is
// looked for beside it, and whether that is the build tree it was compiled in. Internal.

#include <filesystem>

namespace gpupeer {

/// The file holding gpupeer's code in this process: the shared object when it is one
/// (libgpupeer_c.so under Python), else the executable (/proc/self/exe). Empty when neither
/// can be told.
std::filesystem::path gpupeerCodeFile();

/// Whether gpupeerCodeFile() is this code itself a shared object (not the executable).
bool gpupeerCodeIsSharedObject();

/// Whether `file` lies under the build folder this code was compiled in (both resolved through
/// symbolic links first).
bool isInBuildTree(const std::filesystem::path& file);

}  // namespace gpupeer
