#pragma once
// The rank worker's checks (rank_worker.cpp and the scenarios beside it): each prints one line
// per failure and counts it; the worker's exit code says whether any failed.

#include <cstdio>

#include "gpupeer/status.hpp"

namespace gpupeer {

inline int failures = 0;

#define WORKER_CHECK(cond, ...)        \
  do {                                 \
    if (!(cond)) {                     \
      std::printf("FAIL %s: ", #cond); \
      std::printf(__VA_ARGS__);        \
      std::printf("\n");               \
      ++failures;                      \
    }                                  \
  } while (0)

inline bool ok(const Status& st, const char* what) {
  if (!st.isOk()) {
    std::printf("FAIL %s: %s\n", what, st.toString().c_str());
    ++failures;
  }
  return st.isOk();
}

}  // namespace gpupeer
