// Loading the KB from directories of JSON files, and where the built-in KB lives.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/bounded_input.hpp"
#include "core/program_files.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "gpupeer/log.hpp"

namespace gpupeer {
namespace {

namespace fs = std::filesystem;

// The *.json files under `dir`, sorted, so load order (and so which of two duplicate ids
// wins) does not depend on the file system.
Result<std::vector<fs::path>> listJsonFiles(const std::string& dir, std::vector<std::string>* warnings) {
  std::error_code ec;
  if (!fs::exists(dir, ec))
    return GPUPEER_ERROR(ErrorCode::kNotFound, fmt::format("KB directory '{}' does not exist", dir));
  if (!fs::is_directory(dir, ec))
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("KB path '{}' is not a directory", dir));
  std::vector<fs::path> files;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("cannot read KB directory '{}': {}", dir, ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      if (warnings) warnings->push_back(fmt::format("{}: {}; rest of directory skipped", dir, ec.message()));
      break;
    }
    const fs::path& p = it->path();
    if (p.extension() != ".json" || p.filename() == "schema.json") continue;
    if (it->is_regular_file(ec)) files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  return files;
}

Result<KbEntry> loadEntryFile(const fs::path& path) {
  Result<std::string> text = readFileBounded(path.string(), kMaxKbEntryBytes, "KB entry");
  if (!text.isOk()) return text.status();
  return kbEntryFromText(text.value(), path.string());
}

}  // namespace

Result<KnowledgeBase> KnowledgeBase::loadDirectories(const std::vector<std::string>& dirs,
                                                     std::vector<std::string>* warnings) {
  KnowledgeBase kb;
  for (const std::string& dir : dirs) {
    Result<std::vector<fs::path>> files = listJsonFiles(dir, warnings);
    if (!files.isOk()) return files.status();
    for (const fs::path& path : files.value()) {
      Result<KbEntry> entry = loadEntryFile(path);
      Status s = entry.isOk() ? kb.add(std::move(entry).value()) : entry.status();
      if (!s.isOk() && warnings) {
        // Messages of the file's own reading name it already.
        bool named = s.message().rfind(path.string(), 0) == 0 ||
                     s.message().find("'" + path.string() + "'") != std::string::npos;
        warnings->push_back(named ? s.message() + "; skipped"
                                  : fmt::format("{}: {}; skipped", path.string(), s.message()));
      }
    }
  }
  return kb;
}

std::vector<std::string> KnowledgeBase::defaultDirectories() {
  // The KB that came with this code first, so that an installed copy never reads the checkout it
  // was built from; the source tree's kb/ only when the code runs from its own build tree.
  std::vector<std::string> candidates;
  const fs::path code = gpupeerCodeFile();
  if (!code.empty() && isInBuildTree(code)) candidates.push_back(GPUPEER_SOURCE_KB_DIR);
  if (!code.empty()) {
    const fs::path dir = code.parent_path();
    // The shared object of an installed Python package has <package>/kb beside it.
    if (gpupeerCodeIsSharedObject()) candidates.push_back((dir / "kb").string());
    // An install, relocated or not: <prefix>/bin/gpupeer or <prefix>/lib/libgpupeer_c.so
    // finds <prefix>/share/gpupeer/kb.
    candidates.push_back((dir.parent_path() / "share/gpupeer/kb").string());
    // A build folder carried to another machine with its repository: <repo>/build/gpupeer
    // finds <repo>/kb.
    candidates.push_back((dir.parent_path() / "kb").string());
  }
  candidates.push_back(GPUPEER_KB_INSTALL_DIR);

  std::vector<std::string> dirs;
  std::error_code ec;
  for (const std::string& c : candidates) {
    if (fs::is_directory(c, ec)) {
      dirs.push_back(c);
      break;
    }
  }
  if (const char* extra = std::getenv("GPUPEER_KB_PATH")) {
    std::stringstream list(extra);
    std::string dir;
    while (std::getline(list, dir, ':'))
      if (!dir.empty()) dirs.push_back(dir);
  }
  return dirs;
}

std::vector<std::string> KnowledgeBase::existingDefaultDirectories(std::vector<std::string>* skipped) {
  std::vector<std::string> dirs;
  for (const std::string& d : defaultDirectories()) {
    std::error_code ec;
    if (fs::is_directory(d, ec))
      dirs.push_back(d);
    else if (skipped)
      skipped->push_back(
          fmt::format("KB directory '{}' (GPUPEER_KB_PATH) does not exist or is not a directory; skipped", d));
  }
  return dirs;
}

const KnowledgeBase& builtinKnowledgeBase() {
  // A function-local static: initialised once, thread-safe since C++11.
  static const KnowledgeBase kb = [] {
    std::vector<std::string> skipped;
    const std::vector<std::string> dirs = KnowledgeBase::existingDefaultDirectories(&skipped);
    for (const std::string& w : skipped) GPUPEER_WARN("{}", w);
    std::vector<std::string> warnings;
    Result<KnowledgeBase> loaded = KnowledgeBase::loadDirectories(dirs, &warnings);
    for (const std::string& w : warnings) GPUPEER_WARN("KB: {}", w);
    if (!loaded.isOk()) {
      GPUPEER_WARN("KB not loaded: {}", loaded.status().toString());
      return KnowledgeBase{};
    }
    return std::move(loaded).value();
  }();
  return kb;
}

}  // namespace gpupeer
