#pragma once
// Running the real gpupeer binary from tests: exit code, stdout and stderr.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "kb_test_support.hpp"

namespace gpupeer {

struct CliRun {
  int exitCode = -1;
  std::string out;
  std::string err;
};

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `binary args` (the gpupeer under test by default) through the shell; `stdinText`, when
// given, is piped in, and `env` ("NAME=value " or "env -u NAME ") is put before the command.
inline CliRun runCli(const testing::TempDir& scratch, const std::string& args, const std::string* stdinText = nullptr,
                     const std::string& env = "", const std::string& binary = GPUPEER_CLI_PATH) {
  std::string errFile = scratch.path() + "/stderr.txt";
  std::string cmd;
  if (stdinText) cmd = "cat " + quote(scratch.write("stdin.txt", *stdinText)) + " | ";
  cmd += env + quote(binary) + " " + args + " 2>" + quote(errFile);
  CliRun r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  int status = pclose(pipe);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(errFile);
  std::stringstream ss;
  ss << err.rdbuf();
  r.err = ss.str();
  return r;
}

}  // namespace gpupeer
