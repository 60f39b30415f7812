// gpupeer nccl: how to run an unchanged NCCL program on gpupeer on this machine: where
// libgpupeer_nccl.so and the real NCCL are, and the setting for each way a program loads NCCL.
#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "cli_common.hpp"

namespace gpupeer::cli {
namespace {

namespace fs = std::filesystem;

struct Options {
  bool env = false;
};

// Beside the binary (the build folder), or in the lib folder beside its bin (an install).
fs::path findLibrary(std::string& looked) {
  std::error_code ec;
  const fs::path exe = fs::canonical("/proc/self/exe", ec);
  if (ec) return {};
  for (const fs::path& dir :
       {exe.parent_path(), exe.parent_path().parent_path() / "lib", exe.parent_path().parent_path() / "lib64"}) {
    const fs::path candidate = dir / "libgpupeer_nccl.so";
    looked += (looked.empty() ? "" : ", ") + candidate.string();
    if (fs::exists(candidate, ec)) return candidate;
  }
  return {};
}

// The NCCL the library would pass calls to when a program has not loaded one itself.
std::string realNccl(int& version) {
  const char* chosen = std::getenv("GPUPEER_NCCL_REAL_LIBRARY");
  void* handle = dlopen(chosen != nullptr && *chosen ? chosen : "libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return {};
  using GetVersion = int (*)(int*);
  void* symbol = dlsym(handle, "ncclGetVersion");
  Dl_info info{};
  if (symbol == nullptr || dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) return {};
  reinterpret_cast<GetVersion>(symbol)(&version);
  std::error_code ec;
  fs::path path = fs::canonical(info.dli_fname, ec);
  return ec ? std::string(info.dli_fname) : path.string();
}

int run(const Options& o) {
  std::string looked;
  const fs::path library = findLibrary(looked);
  if (library.empty()) {
    fmt::print(stderr, "gpupeer: libgpupeer_nccl.so not found (looked for {})\n", looked);
    return kExitError;
  }
  if (o.env) {
    fmt::print("export LD_PRELOAD={0}\nexport VLLM_NCCL_SO_PATH={0}\n", library.string());
    return kExitOk;
  }
  int version = 0;
  const std::string real = realNccl(version);
  fmt::print("libgpupeer_nccl.so  {}\n", library.string());
  if (real.empty())
    fmt::print("real NCCL           not found: install NCCL 2.x or set GPUPEER_NCCL_REAL_LIBRARY=/path/libnccl.so.2\n");
  else
    fmt::print("real NCCL           {} (NCCL {}.{}.{})\n", real, version / 10000, version / 100 % 100, version % 100);
  fmt::print(
      "\nPrograms that link NCCL (torch.distributed, nccl-tests, JAX): preload the library, which passes\n"
      "every call it does not run to the NCCL the program loaded:\n"
      "  LD_PRELOAD={0} torchrun --nproc-per-node=<GPUs> train.py\n"
      "Libraries that open NCCL by path (vLLM, SGLang):\n"
      "  VLLM_NCCL_SO_PATH={0}\n"
      "gpupeer runs a call only where the kept measurements say it is faster than NCCL at that size and\n"
      "rank count; GPUPEER_NCCL_ROUTE=nccl sends every call to NCCL. Which calls gpupeer ran and why the\n"
      "others went to NCCL: GPUPEER_NCCL_DEBUG=INFO. Shell settings: gpupeer nccl --env.\n",
      library.string());
  return real.empty() ? kExitFailed : kExitOk;
}

CommandRegistrar registrar("nccl", 80, [](CLI::App& app, int& exitCode) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "nccl", "How to run NCCL programs unchanged on gpupeer here: libgpupeer_nccl.so, the real NCCL, the settings");
  sub->add_flag("--env", opts->env, "Print only the shell settings (export LD_PRELOAD=...), for eval");
  sub->footer(helpFooter({"gpupeer nccl", "eval \"$(gpupeer nccl --env)\""},
                         "0 library and real NCCL found, 1 no real NCCL, 2 bad input, 4 libgpupeer_nccl.so not found"));
  sub->callback([opts, &exitCode] { exitCode = run(*opts); });
});

}  // namespace
}  // namespace gpupeer::cli
