#!/usr/bin/env python3
"""scripts/generated_file.py: a stale generated file fails --check; writing makes it current."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from generated_file import write_or_check  # noqa: E402


def main():
    with tempfile.TemporaryDirectory() as root:
        path = os.path.join(root, "table.inc")
        with open(path, "w", encoding="utf-8") as f:
            f.write("old\n")
        assert write_or_check(path, "new\n", True, "tool", root) == 1, "a stale file passed the check"
        with open(path, encoding="utf-8") as f:
            assert f.read() == "old\n", "the check wrote the file"
        assert write_or_check(path, "new\n", False, "tool", root) == 0
        with open(path, encoding="utf-8") as f:
            assert f.read() == "new\n", "writing did not write"
        assert write_or_check(path, "new\n", True, "tool", root) == 0, "a current file failed the check"
    print("generated_file: 4 checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
