#!/usr/bin/env bash
# The CPU sources and CPU unit tests built once more with AddressSanitizer and UBSan (clang, no
# nvcc, no CUDA headers: tests/host_only, also the build without CUDA), run; then each fuzz target
# for FUZZ_SECONDS (scripts/fuzz.sh) on the same build. The CLI tests run the gpupeer built there
# and compare its output on the fixtures with the normal build's (build/gpupeer) when it exists.
# Usage: scripts/sanitize.sh [FUZZ_SECONDS (default 20; 0: no fuzzing)] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${1:-20}
build=${2:-build-sanitize}
start=$(date +%s)
scripts/fuzz.sh --build-only "$build"
built=$(date +%s)
# The same build is the build without CUDA, and so is the top-level one with
# GPUPEER_WITH_CUDA=OFF (configured here, not built: it compiles the same list). Neither may
# search for headers in a folder that holds a CUDA header; the toolkit is out of reach of both.
no_cuda=(env PATH="$(tr ':' '\n' <<<"$PATH" | grep -iv cuda | paste -sd:)" CUDA_HOME=/nonexistent CUDA_PATH= CUDACXX=)
"${no_cuda[@]}" cmake -S . -B "$build/without-cuda" -DGPUPEER_WITH_CUDA=OFF >/dev/null
python3 - "$build/compile_commands.json" "$build/without-cuda/compile_commands.json" <<'PY'
import json, os, shlex, sys
for path in sys.argv[1:]:
    dirs = set()
    for c in json.load(open(path)):
        words = shlex.split(c["command"])
        for i, w in enumerate(words):
            for flag in ("-I", "-isystem", "-iquote", "-idirafter"):
                if w == flag and i + 1 < len(words):
                    dirs.add(words[i + 1])
                elif w.startswith(flag) and len(w) > len(flag):
                    dirs.add(w[len(flag):])
    cuda = sorted(d for d in dirs if os.path.exists(os.path.join(d, "cuda_runtime_api.h")))
    if cuda:
        sys.exit("sanitize: %s searches CUDA's headers in %s" % (path, ", ".join(cuda)))
    print("sanitize: no CUDA header in reach of the %d include folders of %s" % (len(dirs), path))
PY
# detect_leaks: a leak fails the test binary too. halt_on_error: the first report fails it.
ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -L cpu
tested=$(date +%s)
if [ "$fuzz_seconds" -gt 0 ]; then scripts/fuzz.sh "$fuzz_seconds" "$build"; fi
echo "sanitize: build $((built - start)) s, sanitized tests $((tested - built)) s, fuzzing $(($(date +%s) - tested)) s"
