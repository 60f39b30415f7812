#include "core/program_files.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <system_error>

namespace gpupeer {
namespace fs = std::filesystem;

namespace {

fs::path executable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

// The shared object this function is in, or empty when it is in the executable. dladdr names
// the executable by its argv[0], which may be relative or name another file of the same name
// in the working folder: only an existing file other than the executable, named like a
// shared object, is taken for one.
fs::path sharedObject() {
  Dl_info self{};
  if (!dladdr(reinterpret_cast<void*>(&gpupeerCodeFile), &self) || !self.dli_fname) return {};
  std::error_code ec;
  fs::path module = fs::absolute(self.dli_fname, ec);
  if (ec || !fs::is_regular_file(module, ec) || module.filename().string().find(".so") == std::string::npos) return {};
  fs::path exe = executable();
  if (!exe.empty() && fs::equivalent(module, exe, ec)) return {};
  return module;
}

}  // namespace

fs::path gpupeerCodeFile() {
  fs::path module = sharedObject();
  return module.empty() ? executable() : module;
}

bool gpupeerCodeIsSharedObject() { return !sharedObject().empty(); }

bool isInBuildTree(const fs::path& file) {
  std::error_code ec;
  fs::path tree = fs::weakly_canonical(GPUPEER_BUILD_TREE_DIR, ec);
  if (ec || tree.empty()) return false;
  fs::path resolved = fs::weakly_canonical(file, ec);
  if (ec) return false;
  auto [treeEnd, fileAt] = std::mismatch(tree.begin(), tree.end(), resolved.begin(), resolved.end());
  return treeEnd == tree.end();
}

}  // namespace gpupeer
