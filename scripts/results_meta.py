"""The schema of a kept run's meta.json (bench/results/<machine>/<date>-<topic>/meta.json) and
its check against the files beside it. Debian's python3 only.

Required, none of them null:
  commit     the build's commit, 7-40 hex digits
  date       YYYY-MM-DD, the date the folder's name starts with
  machine    the name of the folder above the run's (h200x2: model and GPU count)
  gpu_model  nvidia-smi's name of GPU 0 ("NVIDIA H200")
  gpu_count  the GPUs nvidia-smi lists on the machine
  driver     the NVIDIA driver's version
  command    what made the run: one command, or PER_LOG where each log holds its own
  about      one sentence of what was measured, at most ABOUT_MAX characters, no commit ids
Optional:
  files      {file name or glob: what that file holds}: which build made it, what is special
             about it; each key names at least one file of the run
A fact the run did not record is the text NOT_RECORDED, never a guess. Where machine.txt holds
the date, GPUs and driver (scripts/gpu.sh writes it), meta.json must agree with it.
"""
import datetime
import fnmatch
import os
import re

PER_LOG = "each log's first line"
NOT_RECORDED = "not recorded"
ABOUT_MAX = 200
REQUIRED = ("commit", "date", "machine", "gpu_model", "gpu_count", "driver", "command", "about")
OPTIONAL = ("files",)
COMMIT = re.compile(r"^[0-9a-f]{7,40}$")
DATE = re.compile(r"^\d{4}-\d\d-\d\d$")
# A commit id inside prose: 7+ hex digits with at least one digit and one letter.
COMMIT_IN_TEXT = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
# The end of one sentence and the start of the next.
SENTENCE_BREAK = re.compile(r"[.!?] +[A-Z]")
# nvidia-smi's default table, as some runs kept it in machine.txt: "|   0  NVIDIA H200   On  |".
SMI_GPU_ROW = re.compile(r"^\|\s+(\d+)\s+(.+?)\s+(?:On|Off)\s+\|")
SMI_DRIVER = re.compile(r"Driver Version:\s+(\S+)")


def machine_facts(run_dir):
    """date, GPU model and count, driver from machine.txt: the list scripts/gpu.sh writes
    (date line, then nvidia-smi's CSV) or nvidia-smi's default table after `date`'s output.
    None for each fact the file does not hold, and for all of them without the file."""
    facts = {"date": None, "gpu_model": None, "gpu_count": None, "driver": None}
    path = os.path.join(run_dir, "machine.txt")
    if not os.path.exists(path):
        return facts
    lines = open(path, encoding="utf-8").read().splitlines()
    gpus, table_gpus = [], []
    for i, line in enumerate(lines):
        if line.startswith("date: "):
            facts["date"] = line.split()[1][:10]
        elif i == 0:
            try:  # nvidia-smi's table starts with the time: "Wed Nov 25 16:34:25 2026"
                facts["date"] = datetime.datetime.strptime(line.strip(), "%a %b %d %H:%M:%S %Y").strftime("%Y-%m-%d")
            except ValueError:
                pass
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 4 and parts[0].isdigit():
            gpus.append((parts[1], parts[3]))
        row, driver = SMI_GPU_ROW.match(line), SMI_DRIVER.search(line)
        if row:
            table_gpus.append(row.group(2))
        if driver:
            facts["driver"] = driver.group(1)
    if gpus:
        facts.update(gpu_model=gpus[0][0], gpu_count=len(gpus), driver=gpus[0][1])
    elif table_gpus:
        facts.update(gpu_model=table_gpus[0], gpu_count=len(table_gpus))
    return facts


def about_problems(about):
    if not isinstance(about, str) or not about.strip():
        return ["about: one sentence of what was measured"]
    out = []
    if len(about) > ABOUT_MAX:
        out.append(f"about: {len(about)} characters, more than {ABOUT_MAX}: put the details in files")
    if "\n" in about or SENTENCE_BREAK.search(about) or not about.endswith("."):
        out.append("about: not one sentence ending in a full stop")
    if COMMIT_IN_TEXT.search(about):
        out.append(f"about: names a commit ({COMMIT_IN_TEXT.search(about).group(0)}): say which build in files")
    return out


def meta_problems(meta, run_dir):
    """What is wrong with one run's meta.json; empty when it follows the schema."""
    if not isinstance(meta, dict):
        return ["not a JSON object"]
    out = [f"{key}: missing or null" for key in REQUIRED if meta.get(key) is None]
    out += [f"{key}: not a field of meta.json" for key in meta if key not in REQUIRED + OPTIONAL]
    name = os.path.basename(os.path.normpath(run_dir))
    machine = os.path.basename(os.path.dirname(os.path.abspath(os.path.normpath(run_dir))))
    commit, date = meta.get("commit"), meta.get("date")
    if commit is not None and not (isinstance(commit, str) and COMMIT.match(commit)):
        out.append(f"commit: {commit!r} is not 7-40 hex digits")
    if date is not None and not (isinstance(date, str) and DATE.match(date) and name.startswith(date)):
        out.append(f"date: {date!r} is not the YYYY-MM-DD the folder's name {name} starts with")
    if meta.get("machine") not in (None, machine):
        out.append(f"machine: {meta['machine']!r} is not the folder's machine {machine}")
    count = meta.get("gpu_count")
    if count is not None and not (isinstance(count, int) and not isinstance(count, bool) and count >= 1):
        out.append(f"gpu_count: {count!r} is not a whole number of GPUs")
    for key in ("gpu_model", "driver", "command"):
        if meta.get(key) is not None and not (isinstance(meta[key], str) and meta[key].strip()):
            out.append(f"{key}: empty (write {NOT_RECORDED!r} where the run did not record it)")
    if "about" in meta:
        out += about_problems(meta["about"])
    files = meta.get("files", {})
    if not isinstance(files, dict) or not all(isinstance(v, str) and v for v in files.values()):
        out.append("files: not an object of file names or globs to descriptions")
    else:
        present = os.listdir(run_dir) if os.path.isdir(run_dir) else []
        out += [f"files: {key!r} names no file of the run" for key in files if not fnmatch.filter(present, key)]
    for key, value in machine_facts(run_dir).items():
        if value is not None and meta.get(key) is not None and meta[key] != value:
            out.append(f"{key}: {meta[key]!r} but machine.txt says {value!r}")
    return out
