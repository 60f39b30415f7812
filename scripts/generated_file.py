"""Writing a generated file, or with --check telling whether the committed one is stale: the one
mechanism behind the scripts that write source files from other sources."""
import os
import sys


def write_or_check(path, text, check, tool, root):
    """Writes `text` to `path`, or with `check` compares it and says how to refresh it.
    Returns the exit code: 0, or 1 for a stale file."""
    shown = os.path.relpath(path, root)
    if check:
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{tool}: {shown} is not what its sources give; run scripts/{tool}.py", file=sys.stderr)
                return 1
        print(f"{tool}: {shown} is what its sources give")
        return 0
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {shown}")
    return 0
