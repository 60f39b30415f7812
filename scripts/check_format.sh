#!/usr/bin/env bash
# Fails when clang-format (Google base, .clang-format) would change a C, C++ or CUDA file: the
# tracked ones and the new ones git does not ignore, so a file is checked before it is added.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh' 2>/dev/null ||
  find include src tools tests -name '*.[ch]' -o -name '*.[ch]pp' -o -name '*.cu*')
bad=0
for f in $files; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then echo "format: $f needs clang-format -i"; bad=1; fi
done
[ $bad -eq 0 ] && echo "format: all files clean"
exit $bad
