#!/usr/bin/env bash
# Points git at the repository's hooks in .githooks/ (commit-msg: a subject line of at most 72
# characters) where this tree is a git checkout of its own. Elsewhere (an unpacked copy, a tree
# carried to a GPU machine without .git, a copy inside another repository) it changes nothing
# and succeeds. Run by scripts/setup.sh.
set -u
cd "$(dirname "$0")/.."
command -v git >/dev/null 2>&1 || exit 0
top=$(git rev-parse --show-toplevel 2>/dev/null) || exit 0
[ "$top" = "$(pwd -P)" ] || exit 0
git config core.hooksPath .githooks
