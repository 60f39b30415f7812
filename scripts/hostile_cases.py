#!/usr/bin/env python3
"""Generates hostile inputs for every channel gpupeer reads, runs each, and classifies what came back.

Channels: each subcommand's arguments (the binary and `python -m gpupeer`), environment
variables, snapshot files, KB entry folders, logs for `explain`, `report --results` files,
output paths (existing files and their modes, links, FIFOs, device nodes, folders, read-only
files), standard output full or closed, the Python API and the C API through ctypes. Each case
runs in its own temporary folder under an address-space limit (default 4 GiB) and a time bound
(default 30 s) and gets one class:

  crash       killed by a signal, a sanitizer report, "internal error", a Python traceback
  hang        still running at the bound
  blow-up     more than 1 GiB resident, or an allocation failure
  data-loss   a file the case planted damaged: an old file lost or half-written, a device node,
              FIFO or link replaced, a temporary file left behind
  raw-escape  ESC, a C1 control (U+0080..U+009F or a lone byte 0x80..0x9f), BEL, BS or CR on
              standard output or error (standard output of --json is exempt: JSON keeps strings)
  late-arg    an argument error answered as "no GPU", or after the GPU check (exit 3)
  unclear     an error (exit 2 or 4, or an exception) that names none of the offending
              argument, value or file; or an error with nothing on standard error
  wrong-exit  none of the above, but an exit code the case does not allow
  right       the answer the case allows: success, a clear error, "no GPU" where the machine
              has none

Usage:
  scripts/hostile_cases.py --gpupeer build/gpupeer --library build/libgpupeer_c.so \\
      [--jsonl out.jsonl] [--quick] [--channel NAME ...] [--seed N] [--mutations N]

Exit status: 0 when no case is a crash, hang, blow-up, data loss, raw escape or late argument
error and fewer than --max-unclear (default 5%) are unclear; 1 otherwise; 2 bad usage."""

import argparse
import collections
import copy
import json
import os
import random
import resource
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SNAPSHOT_FIXTURE = os.path.join(ROOT, "tests/data/snapshot_h200_2gpu_captured.json")
BENCH_FIXTURE = os.path.join(ROOT, "tests/data/results_h200x2_bench.jsonl")
COLL_FIXTURE = os.path.join(ROOT, "tests/data/results_h200x4_all_reduce_graph.json")
KB_ENTRY_FIXTURE = os.path.join(ROOT, "kb/cuda/exclusive-process-mode.json")

BAD_CLASSES = ("crash", "hang", "blow-up", "data-loss", "raw-escape", "late-arg")
CLASSES = BAD_CLASSES + ("unclear", "wrong-exit", "right")
ESC = "\x1b[31mRED\x1b]0;title\x07"  # a colour and a window title
C1 = "\u009b31m"  # CSI as a C1 control (UTF-8 \xc2\x9b)
HOSTILE_TEXT = "evil" + ESC + C1 + "\x08\r"
OLD = b"OLD CONTENT THAT MUST SURVIVE\n"


def case(channel, ident, runner="bin", argv=(), **kw):
    """One case. argv and code may hold {tmp} (the case's folder) and {fixture:NAME}."""
    c = {"channel": channel, "id": ident, "runner": runner, "argv": list(argv), "env": {}, "unset": [],
         "stdin": None, "stdout": "pipe", "files": [], "exits": None, "arg_error": False, "names": [],
         "json": "--json" in argv, "code": None, "sigpipe": False}
    c.update(kw)
    return c


# ---- the cases, by channel ------------------------------------------------------------------

def argument_cases():
    """Each subcommand's arguments, wrong in themselves: exit 2 naming the argument, never 'no GPU'."""
    bad = [
        ("check", ["check", "-d", "zero"], ["zero"]),
        ("check", ["check", "-d", "0,0"], ["0,0", "twice"]),
        ("check", ["check", "-d", ""], ["names no device", "''"]),
        ("check", ["check", "-d", ","], [","]),
        ("check", ["check", "-d", "-1"], ["-1"]),
        ("check", ["check", "-d", "0,1x"], ["1x"]),
        ("check", ["check", "--size-mib", "0"], ["--size-mib"]),
        ("check", ["check", "--size-mib", "999999"], ["--size-mib"]),
        ("check", ["check", "--size-mib", "lots"], ["--size-mib", "lots"]),
        ("check", ["check", "-d", HOSTILE_TEXT], ["evil"]),
        ("check", ["check", "--ipc", "-d", "x"], ["'x'"]),
        ("bench", ["bench", "-s", "0"], ["byte"]),
        ("bench", ["bench", "-s", "12X"], ["unit", "12X"]),
        ("bench", ["bench", "-s", "lots"], ["lots"]),
        ("bench", ["bench", "-s", "99999999999999999999"], ["too large", "9999"]),
        ("bench", ["bench", "-s", "-5"], ["-5"]),
        ("bench", ["bench", "-s", "1e400"], ["1e400"]),
        ("bench", ["bench", "--sweep", "-b", "1G", "-e", "8"], ["below"]),
        ("bench", ["bench", "--sweep", "-f", "1"], ["factor"]),
        ("bench", ["bench", "--sweep", "-f", "nan"], ["nan", "factor", "-f"]),
        ("bench", ["bench", "--sweep", "-f", "-2"], ["factor", "-2"]),
        ("bench", ["bench", "--sweep", "-b", "1", "-e", "1G", "-f", "1.001"], ["256"]),
        ("bench", ["bench", "-t", "ce_write,warp_drive"], ["warp_drive"]),
        ("bench", ["bench", "--sweep", "-t", "ce_write,warp_drive"], ["warp_drive"]),
        ("bench", ["bench", "--sweep", "-t", "ce_bidir"], ["ce_bidir"]),
        ("bench", ["bench", "--sweep", "--pair", "0"], ["--pair"]),
        ("bench", ["bench", "--sweep", "--pair", "1,1"], ["twice", "1,1"]),
        ("bench", ["bench", "--pair", "0,1"], ["--pair"]),
        ("bench", ["bench", "-b", "8", "-e", "1G"], ["--sweep"]),
        ("bench", ["bench", "-t", ",,,"], [",,,"]),
        ("bench", ["bench", "-t", ""], ["''", "testcase"]),
        ("bench", ["bench", "-d", ""], ["''", "device"]),
        ("bench", ["bench", "-d", "2,2"], ["twice"]),
        ("bench", ["bench", "--json", "--csv"], ["--json", "--csv"]),
        ("bench", ["bench", "--sm-kernel", "turbo"], ["turbo", "--sm-kernel"]),
        ("bench", ["bench", "--path", "wormhole"], ["wormhole", "--path"]),
        ("bench", ["bench", "--staging-chunk", "1"], ["--staging-chunk", "chunk"]),
        ("bench", ["bench", "-i", "0"], ["-i", "samples"]),
        ("bench", ["bench", "-i", "99999999999"], ["-i", "samples", "99999999999"]),
        ("bench", ["bench", "--copies", "-4"], ["--copies", "-4"]),
        ("bench", ["bench", "--sm-blocks-per-sm", "0"], ["--sm-blocks-per-sm", "0"]),
        ("bench", ["bench", "-t", HOSTILE_TEXT], ["evil"]),
        ("coll", ["coll", "all_shuffle"], ["all_shuffle"]),
        ("coll", ["coll", "--datatype", "float128"], ["float128"]),
        ("coll", ["coll", "--op", "median"], ["median"]),
        ("coll", ["coll", "--datatype", "int8", "--op", "avg"], ["avg"]),
        ("coll", ["coll", "-d", "bfloat16"], ["bfloat16"]),
        ("coll", ["coll", "-o", "max"], ["max"]),
        ("coll", ["coll", "--json", "out.json"], ["out.json"]),
        ("coll", ["coll", "broadcast", "-r", "-1"], ["-r"]),
        ("coll", ["coll", "-b", "0"], ["at least 1 byte", "-b"]),
        ("coll", ["coll", "-e", "1T"], ["16 GiB"]),
        ("coll", ["coll", "-b", "1G", "-e", "1K"], ["below"]),
        ("coll", ["coll", "-f", "1"], ["factor"]),
        ("coll", ["coll", "--proc-rank", "5", "--procs", "2"], ["--proc-rank 5"]),
        ("coll", ["coll", "--proc-rank", "0"], ["--procs"]),
        ("coll", ["coll", "--procs", "99"], ["processes", "99"]),
        ("coll", ["coll", "-n", "0"], ["-n", "iters"]),
        ("coll", ["coll", "-g", "-1"], ["-g", "ngpus"]),
        ("coll", ["coll", "--baseline", "mpi"], ["mpi"]),
        ("coll", ["coll", "--devices", ""], ["''", "device"]),
        ("coll", ["coll", "-d", "0,0"], ["twice"]),
        ("coll", ["coll", "--slot", "lots", "--procs", "2"], ["lots", "--slot"]),
        ("coll", ["coll", "--zero-copy-from", "1M"], ["--registered", "--zero-copy-from"]),
        ("coll", ["coll", HOSTILE_TEXT], ["evil"]),
        ("explain", ["explain"], ["give"]),
        ("explain", ["explain", "-f", "x.log"], ["--file x.log"]),
        ("explain", ["explain", "text", "--file", "x.log"], ["not both", "either"]),
        ("explain", ["explain", "--file", "{tmp}/missing.log"], ["missing.log"]),
        ("explain", ["explain", "--kb", "{tmp}/nokb", "x"], ["nokb"]),
        ("explain", ["explain", "--top", "-3", "x"], ["--top", "-3"]),
        ("explain", ["explain", "--top", "x", "y"], ["--top", "x"]),
        ("explain", ["explain", "--file", "{tmp}"], ["folder", "{tmp}"]),
        ("snapshot", ["snapshot", "--snapshot", ""], ["empty"]),
        ("snapshot", ["snapshot", "-o", ""], ["empty"]),
        ("snapshot", ["snapshot", "--snapshot", "{tmp}/none.json"], ["none.json"]),
        ("report", ["report", "-o", ""], ["empty"]),
        ("report", ["report", "--results", "{tmp}/none.jsonl", "--snapshot", "{fixture:snapshot}"], ["none.jsonl"]),
        ("topo", ["topo", "--snapshot", "{tmp}/" + HOSTILE_TEXT], ["evil"]),
        ("doctor", ["doctor", "--snapshot", "{tmp}/none.json"], ["none.json"]),
        ("main", ["frobnicate"], ["frobnicate"]),
        ("main", ["--bogus"], ["--bogus"]),
        ("main", [HOSTILE_TEXT], ["evil"]),
        ("nccl", ["nccl", "--bogus"], ["--bogus"]),
    ]
    python_has = {"check", "explain", "snapshot", "report", "topo", "doctor", "main"}
    out = []
    for sub, argv, names in bad:
        out.append(case("arguments", "%s/bin/%s" % (sub, " ".join(argv)[:60]), "bin", argv, arg_error=True,
                        names=names, exits={2}))
        if sub in python_has:
            out.append(case("arguments", "%s/py/%s" % (sub, " ".join(argv)[:60]), "py", argv, arg_error=True,
                            names=names, exits={2}))
    # Names and words that are not UTF-8 (bytes 0xff, 0x9b as the shell passes them): read as
    # bytes, echoed escaped, never a traceback.
    bench_rows = open(BENCH_FIXTURE, "rb").read()
    odd = [
        (["report", "--snapshot", "{fixture:snapshot}", "--results", "{tmp}/r\udcff\udc9b.jsonl", "-o",
          "{tmp}/out.html", "--title", "t\udcfe\udc9b"], [("r\udcff\udc9b.jsonl", "file", bench_rows)], {0}),
        (["snapshot", "--snapshot", "{fixture:snapshot}", "-o", "{tmp}/o\udcff\udc9b"], [], {0}),
        (["explain", "--file", "{tmp}/l\udcff\udc9b.log"], [("l\udcff\udc9b.log", "file", b"CUDA error 217\n")],
         {0}),
        (["topo", "--snapshot", "{tmp}/s\udcff\udc9b.json"], [], {2}),
        (["explain", "peer\udcff\udc9b access"], [], {0, 1}),
        (["report", "--snapshot", "{fixture:snapshot}", "--results", "{tmp}/missing\udc9b.jsonl"], [], {2}),
    ]
    for argv, files, exits in odd:
        for runner in ("bin", "py"):
            out.append(case("arguments", "not-utf8/%s/%s" % (runner, argv[0]), runner, argv, files=files,
                            exits=exits, names=[".json", ".jsonl", "missing"]))
    # Arguments that are right: "no GPU" (3) here, 0 on a machine with GPUs; never a crash.
    fine = [["check"], ["check", "-d", "0,1", "--size-mib", "1"], ["check", "--ipc"], ["check", "--ipc", "--json"],
            ["bench", "-t", "ce_write", "-s", "4093"], ["coll", "-b", "13", "-e", "13"], ["topo"], ["doctor"],
            ["doctor", "--no-gpu-actions"], ["snapshot"], ["snapshot", "--json"], ["nccl"], ["nccl", "--env"],
            ["--version"], ["--help"], ["bench", "--list"], ["coll", "--tuning-variables"], ["explain", "--help"]]
    for argv in fine:
        for runner in ("bin", "py"):
            if runner == "py" and argv[0] in ("bench", "coll", "nccl") or runner == "py" and argv == ["explain",
                                                                                                       "--help"]:
                continue
            out.append(case("arguments", "fine/%s/%s" % (runner, " ".join(argv)), runner, argv,
                            exits={0, 1, 3, 5} | ({4} if argv[0] == "nccl" else set()),
                            names=["libgpupeer_nccl.so"] if argv[0] == "nccl" else []))
    return out


def environment_cases():
    env_sets = [
        ("cvd-escapes", {"CUDA_VISIBLE_DEVICES": HOSTILE_TEXT}),
        ("cvd-huge", {"CUDA_VISIBLE_DEVICES": "0," * 50000}),
        ("cvd-not-utf8", {"CUDA_VISIBLE_DEVICES": b"\xff\xfe\x9b".decode("latin-1")}),
        ("debug-garbage", {"GPUPEER_DEBUG": "LOUDEST" + ESC}),
        ("debug-trace", {"GPUPEER_DEBUG": "TRACE"}),
        ("kb-path-hostile", {"GPUPEER_KB_PATH": "::/nonexistent:" + "x" * 5000 + ":{tmp}/" + HOSTILE_TEXT}),
        ("kb-path-file", {"GPUPEER_KB_PATH": "{fixture:snapshot}"}),
        ("nccl-p2p-banana", {"NCCL_P2P_LEVEL": "BANANA" + ESC}),
        ("tuning-garbage", {"GPUPEER_CE_SLOT": "lots", "GPUPEER_ONESHOT_BLOCKS": "0", "GPUPEER_ALGO": "fastest"}),
        ("home-hostile", {"HOME": "/nonexistent/" + HOSTILE_TEXT, "TMPDIR": "/nonexistent"}),
        ("locale-odd", {"LANG": "xx_YY.EBCDIC", "LC_ALL": "C", "PYTHONIOENCODING": "ascii"}),
        ("columns-huge", {"COLUMNS": "99999999999999999999", "TERM": ESC}),
    ]
    out = []
    for name, env in env_sets:
        for argv in (["topo"], ["doctor", "--no-gpu-actions"], ["snapshot"], ["explain", "peer access is not supported"],
                     ["check"]):
            for runner in ("bin", "py"):
                out.append(case("environment", "%s/%s/%s" % (name, runner, argv[0]), runner, argv, env=env,
                                exits={0, 1, 3, 5}))
    # The Python package's own variable: never a traceback, never another library in its place.
    for name, value in (("not-a-library", "{fixture:snapshot}"), ("missing", "{tmp}/no.so"), ("folder", "{tmp}"),
                        ("escapes", "{tmp}/" + HOSTILE_TEXT + ".so"), ("empty", "")):
        out.append(case("environment", "GPUPEER_LIBRARY/%s" % name, "py", ["topo"],
                        env={"GPUPEER_LIBRARY": value}, exits={3, 4}, names=["GPUPEER_LIBRARY"]))
    return out


def _walk(value, path=()):
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:2]):
            yield from _walk(v, path + (i,))


def _set(doc, path, value):
    target = doc
    for p in path[:-1]:
        target = target[p]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value


_DELETE = object()
_REPLACEMENTS = [("string", "lots" + ESC), ("negative", -7), ("huge-int", 2 ** 70), ("huge-float", 1.7e308),
                 ("tiny-float", 5e-324), ("null", None), ("array", [1, [2]]), ("object", {"x": 1}),
                 ("bool", True), ("empty-string", ""), ("deleted", _DELETE), ("c1", "\u009b" * 3 + "x")]


def snapshot_documents(rng, count):
    """(name, bytes, names) of hostile snapshot files: whole-file damage plus `count` field mutations."""
    with open(SNAPSHOT_FIXTURE, "rb") as f:
        raw = f.read()
    base = json.loads(raw)
    docs = [("empty", b"", []), ("binary", bytes(range(256)) * 4, []), ("truncated", raw[: len(raw) // 2], []),
            ("not-utf8", raw.replace(b'"vm"', b'"v\xff\xfe"'), []),
            ("number-overflow", raw.replace(b'"smCount": 132', b'"smCount": 1e400', 1), []),
            ("deep-nesting", b'{"schema":"gpupeer.snapshot","version":1,"x":' + b"[" * 100000 + b"]" * 100000 + b"}",
             ["64 levels"]),
            ("many-keys", b'{"schema":"gpupeer.snapshot","version":1,"x":{' +
             b",".join(b'"k%d":0' % i for i in range(150000)) + b"}}", ["10000 keys"]),
            ("top-level-array", b"[1,2,3]", ["object"]), ("other-schema", b'{"schema":"other","version":1}', []),
            ("future-version", raw.replace(b'"version": 1', b'"version": 99', 1), ["99"]),
            ("nul-bytes", raw[:100] + b"\0" * 50 + raw[100:], [])]
    def mutated(name, change):
        d = copy.deepcopy(base)
        change(d)
        return (name, json.dumps(d).encode(), [])
    docs += [
        mutated("duplicate-gpu-index", lambda d: d["gpus"][1].__setitem__("index", 0)),
        mutated("duplicate-bus-id", lambda d: d["gpus"][1].__setitem__("pciBusId", d["gpus"][0]["pciBusId"])),
        mutated("duplicate-uuid", lambda d: d["gpus"][1].__setitem__("uuid", d["gpus"][0]["uuid"])),
        mutated("cc-beta", lambda d: d["gpus"][0].__setitem__("computeCapability", "9.0-beta")),
        mutated("memory-16eib", lambda d: d["gpus"][0].__setitem__("memoryBytes", 2 ** 64 - 1)),
        mutated("device-count-disagrees", lambda d: d.__setitem__("deviceCount", 7)),
        mutated("cpu-list-huge-number", lambda d: d["gpus"][0].__setitem__("cpuAffinity", "2147483647")),
        mutated("cpu-list-repeated", lambda d: d["gpus"][0].__setitem__("cpuAffinity", ",".join(["0-65536"] * 20000))),
        mutated("cpu-list-ranges", lambda d: [g.__setitem__("cpuAffinity", ",".join("%d-%d" % (i * 3, i * 3 + 1)
                                                                                 for i in range(300)))
                                              for g in d["gpus"]]),
        mutated("process-affinity-escapes", lambda d: d["platform"].__setitem__("processCpuAffinity", HOSTILE_TEXT)),
        mutated("gpu-name-escapes", lambda d: d["gpus"][0].__setitem__("name", HOSTILE_TEXT)),
        mutated("hostname-escapes", lambda d: d.__setitem__("hostname", HOSTILE_TEXT)),
        mutated("env-escapes", lambda d: d["environment"].__setitem__("CUDA_VISIBLE_DEVICES", HOSTILE_TEXT)),
        mutated("no-gpus-reason-escapes", lambda d: (d.__setitem__("gpus", []), d.__setitem__("pairs", []),
                                                     d.__setitem__("deviceCount", {"unknown": HOSTILE_TEXT}))),
        mutated("nvlink-to-itself", lambda d: d["gpus"][0]["nvlinks"][0].update(
            {"remoteType": "gpu", "remoteBusId": d["gpus"][0]["pciBusId"]})),
        mutated("pair-twice", lambda d: d["pairs"].append(d["pairs"][0])),
        mutated("pair-unknown-gpu", lambda d: d["pairs"][0].__setitem__("dst", 7)),
        mutated("p2p-level-banana", lambda d: d["environment"].__setitem__("NCCL_P2P_LEVEL", "BANANA")),
        mutated("ptrace-negative", lambda d: d["platform"].__setitem__("ptraceScope", -7)),
        mutated("dev-shm-negative", lambda d: d["platform"].__setitem__("devShmBytes", -1)),
        mutated("many-nvlinks", lambda d: d["gpus"][0].__setitem__("nvlinks", d["gpus"][0]["nvlinks"][:1] * 500)),
        mutated("many-gpus", lambda d: d.__setitem__("gpus", [dict(d["gpus"][0], index=i) for i in range(300)])),
    ]
    paths = [p for p, _ in _walk(base) if p and p[0] not in ("schema",)]
    for _ in range(count):
        path = rng.choice(paths)
        label, value = rng.choice(_REPLACEMENTS)
        d = copy.deepcopy(base)
        try:
            _set(d, path, value)
        except (KeyError, IndexError, TypeError):
            continue
        name = "field-%s-%s" % (".".join(str(p) for p in path), label)
        docs.append((name, json.dumps(d).encode(), []))
    return docs


def snapshot_cases(rng, count):
    out = []
    subcommands = (["topo", "--snapshot", "{tmp}/s.json"], ["doctor", "--no-gpu-actions", "--snapshot", "{tmp}/s.json"],
                   ["snapshot", "--snapshot", "{tmp}/s.json"],
                   ["report", "--snapshot", "{tmp}/s.json", "-o", "{tmp}/r.html"])
    for i, (name, data, names) in enumerate(snapshot_documents(rng, count)):
        # Every document through the binary; the subcommand and the runner rotate so that the
        # Python CLI and every reader see some of each kind.
        argv = subcommands[i % len(subcommands)]
        for runner in ("bin", "py") if i % 2 == 0 else ("bin",):
            out.append(case("snapshot", "%s/%s/%s" % (name, runner, argv[0]), runner, argv,
                            files=[("s.json", "file", data)], names=names + ["s.json"], exits={0, 1, 2, 3, 5}))
    special = [("fifo", ("s.json", "fifo-idle", None)), ("dev-zero", ("s.json", "link", "/dev/zero")),
               ("folder", ("s.json", "dir", None)), ("dev-stdin-pipe", None)]
    for name, spec in special:
        for argv in subcommands[:2]:
            for runner in ("bin", "py"):
                kw = {"files": [spec]} if spec else {"stdin": b"{}", "argv_override": True}
                a = argv if spec else [x.replace("{tmp}/s.json", "/dev/stdin") for x in argv]
                out.append(case("snapshot", "%s/%s/%s" % (name, runner, argv[0]), runner, a,
                                names=["s.json", "/dev/stdin"], exits={2, 4}, **{k: v for k, v in kw.items()
                                                                                if k != "argv_override"}))
    return out


def kb_cases():
    with open(KB_ENTRY_FIXTURE) as f:
        entry = json.load(f)
    def variant(change):
        e = copy.deepcopy(entry)
        change(e)
        return json.dumps(e).encode()
    bad = [("empty", b""), ("binary", bytes(range(256))), ("truncated", json.dumps(entry).encode()[:40]),
           ("deep", b"[" * 5000 + b"]" * 5000), ("huge", b" " * (5 << 20)),
           ("regex-unbalanced", variant(lambda e: e.__setitem__("regex", "(peer"))),
           ("regex-backref", variant(lambda e: e.__setitem__("regex", r"(a)\1"))),
           ("regex-alternatives", variant(lambda e: e.__setitem__("regex", "|".join("w%d" % i for i in range(150000))))),
           ("regex-wide-repeat", variant(lambda e: e.__setitem__("regex", "(?s).{1,1000}x"))),
           ("regex-empty-match", variant(lambda e: e.__setitem__("regex", "x*"))),
           ("regex-catastrophic", variant(lambda e: e.__setitem__("regex", "(a+)+$b"))),
           ("id-escapes", variant(lambda e: e.__setitem__("id", "cuda/" + HOSTILE_TEXT))),
           ("text-escapes", variant(lambda e: [e.__setitem__(k, HOSTILE_TEXT) for k in list(e)
                                              if isinstance(e[k], str) and k not in ("id", "regex")])),
           ("wrong-types", variant(lambda e: [e.__setitem__(k, 5) for k in list(e) if k != "id"])),
           ("rate-seven", variant(lambda e: e.__setitem__("confidence", 7))),
           ("many-keys", b"{" + b",".join(b'"k%d":0' % i for i in range(20000)) + b"}")]
    out = []
    for name, data in bad:
        files = [("kb", "dir", None), ("kb/" + name + ".json", "file", data)]
        for runner in ("bin", "py"):
            out.append(case("kb", "%s/%s" % (name, runner), runner,
                            ["explain", "--kb", "{tmp}/kb", "cudaErrorDevicesUnavailable", "exclusive", "process"],
                            files=files, exits={0, 1}, names=[name]))
        out.append(case("kb", "%s/env" % name, "bin", ["explain", "peer access is not supported"],
                        env={"GPUPEER_KB_PATH": "{tmp}/kb"}, files=files, exits={0, 1}, names=[name]))
    for link, target in (("dev-zero", "/dev/zero"), ("fifo", None)):
        files = [("kb", "dir", None), ("kb/x.json", "link", target) if target else ("kb/x.json", "fifo-idle", None)]
        out.append(case("kb", link, "bin", ["explain", "--kb", "{tmp}/kb", "x"], files=files, exits={0, 1}))
    return out


def log_cases():
    logs = [("empty", b""), ("escapes", b"NCCL WARN " + ESC.encode() + b" peer access is not supported\n"),
            ("c1-utf8", b"cudaErrorPeerAccessUnsupported \xc2\x9b31m\n"), ("c1-byte", b"peer access \x9b31m\n"),
            ("backspace-cr", b"peer\x08\x08 access is not supported\r\n"), ("binary", bytes(range(256)) * 100),
            ("nul", b"peer access\0is not supported\n"), ("not-utf8", b"\xff\xfe peer access is not supported\n"),
            ("long-line", b"x" * (10 << 20)), ("many-lines", b"CUDA error 217\n" * 200000),
            ("bare-code", b"217\n"), ("nccl-tests-huge-wrong", b"#  8  2  float  sum  -1  9.1  0.00  0.00  "
                                                             b"99999999999999999999  9.0  0.00  0.00  0\n")]
    out = []
    for name, data in logs:
        for runner in ("bin", "py"):
            out.append(case("log", "%s/%s/file" % (name, runner), runner, ["explain", "--file", "{tmp}/x.log"],
                            files=[("x.log", "file", data)], exits={0, 1}))
            out.append(case("log", "%s/%s/stdin" % (name, runner), runner, ["explain", "-"], stdin=data,
                            exits={0, 1}))
        out.append(case("log", "%s/bin/json" % name, "bin", ["explain", "--json", "--file", "{tmp}/x.log"],
                        files=[("x.log", "file", data)], exits={0, 1}))
    out.append(case("log", "fifo-with-writer/bin", "bin", ["explain", "--file", "{tmp}/x.log"],
                    files=[("x.log", "fifo-writer", b"peer access is not supported\n")], exits={0, 1}))
    out.append(case("log", "words-escapes/bin", "bin", ["explain", HOSTILE_TEXT], exits={0, 1}))
    out.append(case("log", "words-escapes/py", "py", ["explain", HOSTILE_TEXT], exits={0, 1}))
    return out


def results_documents():
    with open(BENCH_FIXTURE, "rb") as f:
        bench = [line for line in f.read().split(b"\n") if line.startswith(b"{")]
    first = json.loads(bench[0])
    def row(change):
        r = copy.deepcopy(first)
        change(r)
        return json.dumps(r).encode() + b"\n"
    deep = b'{"testcase":"x","cells":' + b"[" * 100000 + b"]" * 100000 + b"}\n"
    return [("empty", b""), ("binary", bytes(range(256)) * 10), ("deep-nesting", deep),
            ("wrong-type", row(lambda r: r["cells"][0].__setitem__("verified", "yes"))),
            ("cells-object", row(lambda r: r.__setitem__("cells", {}))),
            ("extreme-max", row(lambda r: [c.__setitem__("median", 1.7e308) for c in r["cells"]])),
            ("extreme-min", row(lambda r: [c.__setitem__("median", 5e-324) for c in r["cells"]])),
            ("ordinal-30000", row(lambda r: r["cells"][0].__setitem__("src", 30000))),
            ("bytes-fraction", row(lambda r: r["cells"][0].__setitem__("bytes", 0.5))),
            ("many-cells", row(lambda r: r.__setitem__("cells", [dict(r["cells"][0], src=i % 128, dst=(i // 128) % 128)
                                                                for i in range(30000)]))),
            ("label-escapes", row(lambda r: r["cells"][0].__setitem__("label", HOSTILE_TEXT))),
            ("testcase-escapes", row(lambda r: r.__setitem__("testcase", HOSTILE_TEXT))),
            ("many-keys", b"{" + b",".join(b'"k%d":0' % i for i in range(20000)) + b"}\n"),
            ("many-rows", b"".join(bench[:1]) * 1 + (b"\n".join(bench[:1]) + b"\n") * 120000)]


def results_cases():
    out = []
    for name, data in results_documents():
        for runner in ("bin", "py"):
            out.append(case("results", "%s/%s" % (name, runner), runner,
                            ["report", "--snapshot", "{fixture:snapshot}", "--results", "{tmp}/r.jsonl", "-o",
                             "{tmp}/out.html"], files=[("r.jsonl", "file", data)], names=["r.jsonl"],
                            exits={0, 2}))
    for name, spec in (("fifo", ("r.jsonl", "fifo-idle", None)), ("dev-zero", ("r.jsonl", "link", "/dev/zero")),
                       ("folder", ("r.jsonl", "dir", None)), ("escaped-name", None)):
        path = "{tmp}/r.jsonl" if spec else "{tmp}/" + HOSTILE_TEXT + ".jsonl"
        files = [spec] if spec else [(HOSTILE_TEXT + ".jsonl", "file", open(BENCH_FIXTURE, "rb").read())]
        for runner in ("bin", "py"):
            out.append(case("results", "%s/%s" % (name, runner), runner,
                            ["report", "--snapshot", "{fixture:snapshot}", "--results", path, "-o", "{tmp}/out.html"],
                            files=files, names=["r.jsonl", "evil"], exits={0, 2, 4}))
    return out


def output_cases():
    """-o targets: what was there must survive a failure, and be replaced whole (mode kept) or
    written in place (FIFO, device) on success."""
    targets = [
        ("new-file", [], "keep-new"),
        ("existing-0600", [("out", "file", OLD, 0o600)], "replaced-or-kept"),
        ("existing-0755", [("out", "file", OLD, 0o755)], "replaced-or-kept"),
        ("read-only-0444", [("out", "file", OLD, 0o444)], "replaced-or-kept"),
        ("symlink", [("real", "file", OLD, 0o640), ("out", "link", "real")], "link-kept"),
        ("dangling-symlink", [("out", "link", "nothing")], "link-kept"),
        ("fifo-with-reader", [("out", "fifo-reader", None)], "fifo-kept"),
        ("char-device", [("out", "chardev-null", None)], "chardev-kept"),
        ("dev-null-link", [("out", "link", "/dev/null")], "link-kept"),
        ("dev-full-link", [("out", "link", "/dev/full")], "link-kept"),
        ("folder", [("out", "dir", None)], "dir-kept"),
        ("missing-folder", [], None),
        ("read-only-folder", [("ro", "dir", None, 0o555), ("ro/out", "file", OLD, 0o644)], "ro/out:replaced-or-kept"),
        ("escaped-name", [], None),
    ]
    out = []
    for name, files, check in targets:
        target = "{tmp}/out"
        if name == "missing-folder":
            target = "{tmp}/missing/out"
        elif name == "read-only-folder":
            target = "{tmp}/ro/out"
        elif name == "escaped-name":
            target = "{tmp}/" + HOSTILE_TEXT
        for runner in ("bin", "py"):
            for argv in (["snapshot", "--snapshot", "{fixture:snapshot}", "-o", target],
                         ["report", "--snapshot", "{fixture:snapshot}", "-o", target],
                         ["snapshot", "--snapshot", "{tmp}/bad.json", "-o", target]):
                kw = {"files": list(files), "check": check, "names": ["out", "evil"], "exits": {0, 2, 4}}
                if "{tmp}/bad.json" in argv:
                    kw["files"] = kw["files"] + [("bad.json", "file", b"{not json")]
                    kw["names"] = kw["names"] + ["bad.json"]
                    kw["exits"] = {2}
                out.append(case("output", "%s/%s/%s%s" % (name, runner, argv[0], "/bad-input" if "bad.json" in
                                                          " ".join(argv) else ""), runner, argv, **kw))
    # coll -o is checked before the GPUs are counted; with no GPU nothing may be written.
    out.append(case("output", "coll-o-folder/bin", "bin", ["coll", "-o", "{tmp}"], names=["{tmp}", "folder"],
                    exits={2, 3}))
    return out


def stdout_cases():
    out = []
    argvs = [["--help"], ["--version"], ["explain", "peer access is not supported"],
             ["explain", "--json", "peer access is not supported"], ["topo", "--snapshot", "{fixture:snapshot}"],
             ["doctor", "--no-gpu-actions", "--snapshot", "{fixture:snapshot}"],
             ["snapshot", "--json", "--snapshot", "{fixture:snapshot}"], ["bench", "--list"], ["nccl"],
             ["coll", "--tuning-variables"]]
    for argv in argvs:
        for runner in ("bin", "py"):
            if runner == "py" and argv[0] in ("bench", "nccl", "coll"):
                continue
            # `nccl` without libgpupeer_nccl.so built beside the binary says so first (exit 4).
            names = ["standard output"] + (["libgpupeer_nccl.so"] if argv[0] == "nccl" else [])
            for how in ("full", "closed"):
                out.append(case("stdout", "%s/%s/%s" % (how, runner, " ".join(argv)[:40]), runner, argv, stdout=how,
                                names=names, exits={4}))
            out.append(case("stdout", "broken-pipe/%s/%s" % (runner, " ".join(argv)[:40]), runner, argv,
                            stdout="broken-pipe", sigpipe=True, exits={0, 1, 5} | ({4} if argv[0] == "nccl" else set())))
    return out


def api_cases():
    """The Python API: exceptions of the package, TypeError or ValueError naming the argument;
    never another exception, never a value cut to 32 bits."""
    calls = [
        ("explain-surrogate", "gpupeer.explain('a\\udc80b')", ["surrogate"]),
        ("explain-none", "gpupeer.explain(None)", ["text_or_path", "None", "str"]),
        ("explain-int", "gpupeer.explain(5)", ["text_or_path", "int"]),
        ("explain-huge-top", "gpupeer.explain('x', top=2**70)", ["top"]),
        ("explain-negative-top", "gpupeer.explain('x', top=-1)", ["top"]),
        ("explain-kb-missing", "gpupeer.explain('x', kb_dirs=['{tmp}/nokb'])", ["nokb"]),
        ("explain-kb-str", "gpupeer.explain('x', kb_dirs='{tmp}')", ["kb_dirs"]),
        ("explain-escapes", "print(gpupeer.explain('%s'))" % HOSTILE_TEXT.encode("unicode_escape").decode(), []),
        ("load-snapshot-missing", "gpupeer.load_snapshot('{tmp}/none.json')", ["none.json"]),
        ("load-snapshot-folder", "gpupeer.load_snapshot('{tmp}')", ["{tmp}"]),
        ("check-ipc-str", "gpupeer.check_ipc('x')", ["devices", "str"]),
        ("check-ipc-huge", "gpupeer.check_ipc(2**40)", ["devices", "1099511627776"]),
        ("load-snapshot-bytes", "gpupeer.load_snapshot(b'{fixture:snapshot}')", []),
        ("load-snapshot-nul", "gpupeer.load_snapshot('a\\0b')", ["NUL", "null", "path"]),
        ("topology-dict", "gpupeer.topology({'schema': 'x'})", ["schema", "snapshot"]),
        ("topology-int", "gpupeer.topology(5)", ["snapshot"]),
        ("doctor-missing", "gpupeer.doctor('{tmp}/none.json')", ["none.json"]),
        ("check-huge-device", "gpupeer.check([2**40])", ["2**40", "1099511627776", "device"]),
        ("check-str-devices", "gpupeer.check('0,1')", ["devices"]),
        ("check-size-zero", "gpupeer.check(size_mib=0)", ["size_mib", "size"]),
        ("check-size-huge", "gpupeer.check(size_mib=2**64)", ["size_mib", "size"]),
        ("init-wrapped", "gpupeer.init(2**32+5, 2**32+2, b'x'*128)", ["4294967301", "rank"]),
        ("init-timeout", "gpupeer.init(0, 2, gpupeer.get_unique_id(), timeout_ms=2**32+1)", ["timeout_ms", "GPU",
                                                                                               "4294967297"]),
        ("init-bad-id", "gpupeer.init(0, 2, 'short')", ["unique_id", "id"]),
        ("init-negative-rank", "gpupeer.init(-1, 2, b'x'*128)", ["rank", "-1"]),
        ("init-zero-world", "gpupeer.init(0, 0, b'x'*128)", ["world_size", "0"]),
        ("init-float", "gpupeer.init(0.5, 2, b'x'*128)", ["rank"]),
        ("communicator-empty", "gpupeer.Communicator(devices=[])", ["devices", "GPUs"]),
        ("communicator-duplicate", "gpupeer.Communicator(devices=[0, 0])", ["0", "twice", "devices"]),
        ("communicator-huge", "gpupeer.Communicator(devices=[2**63])", ["devices", "9223372036854775808"]),
        ("communicator-str", "gpupeer.Communicator(devices='01')", ["devices"]),
        ("all-gather-not-callable", "gpupeer.init_with_all_gather(0, 2, 5)", ["all_gather", "callable"]),
    ]
    out = [case("python-api", name, "api", code=code, names=names, exits={2, 4} if "folder" in name else {0, 2, 3})
           for name, code, names in calls]
    return out


def capi_cases():
    """The C API through ctypes, with arguments its header does not promise to take."""
    calls = [
        ("snapshot-json-both-null", "rc = L.gpupeer_snapshot_json(None, None, byref(out), byref(err))", {0, 3}),
        ("snapshot-json-missing", "rc = L.gpupeer_snapshot_json(b'{tmp}/none.json', None, byref(out), byref(err))",
         {2}),
        ("snapshot-json-bad-text", "rc = L.gpupeer_snapshot_json(None, b'{\\x1b', byref(out), byref(err))", {2}),
        ("topology-bad-format", "rc = L.gpupeer_topology(b'{fixture:snapshot}', None, 99, byref(out), byref(err))",
         {2}),
        ("topology-negative-format", "rc = L.gpupeer_topology(b'{fixture:snapshot}', None, -1, byref(out), "
         "byref(err))", {2}),
        ("explain-both-null", "n = c_size_t(); rc = L.gpupeer_explain(None, None, None, 0, 5, 0, byref(out), "
         "byref(n), byref(err))", {2}),
        ("explain-kb-negative-count", "n = c_size_t(); rc = L.gpupeer_explain(b'x', None, None, -5, 5, 0, byref(out),"
         " byref(n), byref(err))", {2}),
        ("explain-kb-null-dirs", "n = c_size_t(); rc = L.gpupeer_explain(b'x', None, None, 3, 5, 0, byref(out), "
         "byref(n), byref(err))", {2}),
        ("explain-bad-format", "n = c_size_t(); rc = L.gpupeer_explain(b'x', None, None, 0, 5, 7, byref(out), "
         "byref(n), byref(err))", {2}),
        ("check-null-devices", "f = c_int(); rc = L.gpupeer_check(None, 5, 1 << 20, 0, byref(out), byref(f), "
         "byref(err))", {2, 3}),
        ("check-negative-count", "f = c_int(); d = (c_int * 1)(0); rc = L.gpupeer_check(d, -1, 1 << 20, 0, "
         "byref(out), byref(f), byref(err))", {2, 3}),
        ("doctor-bad-format", "w = c_int(); rc = L.gpupeer_doctor(b'{fixture:snapshot}', None, 0, 42, byref(out), "
         "byref(w), byref(err))", {2}),
        ("report-negative-count", "c = (c_size_t * 4)(); rc = L.gpupeer_report(b'{fixture:snapshot}', None, None, -3, "
         "None, None, byref(out), None, c, byref(err))", {2}),
        ("report-null-results", "rc = L.gpupeer_report(b'{fixture:snapshot}', None, None, 2, None, None, byref(out), "
         "None, None, byref(err))", {2}),
        ("check-ipc-null-devices", "f = c_int(); rc = L.gpupeer_check_ipc(None, 3, 0, byref(out), byref(f), byref(err))",
         {2}),
        ("check-ipc-negative-count", "f = c_int(); d = (c_int * 1)(0); rc = L.gpupeer_check_ipc(d, -1, 0, byref(out), "
         "byref(f), byref(err))", {2}),
        ("check-ipc-bad-format", "f = c_int(); rc = L.gpupeer_check_ipc(None, 0, 9, byref(out), byref(f), byref(err))",
         {2}),
        ("check-ipc-duplicate", "f = c_int(); d = (c_int * 2)(0, 0); rc = L.gpupeer_check_ipc(d, 2, 1, byref(out), "
         "byref(f), byref(err))", {2}),
        ("check-ipc-no-gpu", "f = c_int(); rc = L.gpupeer_check_ipc(None, 0, 1, byref(out), byref(f), byref(err))",
         {0, 1, 3}),
        ("write-null-path", "rc = L.gpupeer_write_output_file(None, b'x', 1, byref(err))", {2}),
        ("write-null-data", "rc = L.gpupeer_write_output_file(b'{tmp}/w', None, 5, byref(err))", {2}),
        ("write-folder", "rc = L.gpupeer_write_output_file(b'{tmp}', b'x', 1, byref(err))", {2}),
        ("write-missing-folder", "rc = L.gpupeer_write_output_file(b'{tmp}/no/w', b'x', 1, byref(err))", {4}),
        ("write-dev-full", "rc = L.gpupeer_write_output_file(b'/dev/full', b'x', 1, byref(err))", {4}),
        ("elements-bad-op", "a = c_size_t(); b = c_size_t(); rc = L.gpupeer_collective_elements(99, 8, 2, byref(a), "
         "byref(b), byref(err))", {2}),
        ("elements-zero-ranks", "a = c_size_t(); b = c_size_t(); rc = L.gpupeer_collective_elements(0, 8, 0, "
         "byref(a), byref(b), byref(err))", {2}),
        ("elements-huge-count", "a = c_size_t(); b = c_size_t(); rc = L.gpupeer_collective_elements(1, 2**64-1, 8, "
         "byref(a), byref(b), byref(err))", {0, 2}),
        ("comm-create-null", "c = c_void_p(); rc = L.gpupeer_comm_create(None, 3, byref(c), byref(err))", {2, 3}),
        ("comm-create-negative", "c = c_void_p(); d = (c_int * 2)(0, 1); rc = L.gpupeer_comm_create(d, -2, byref(c),"
         " byref(err))", {2, 3}),
        ("rank-init-null-id", "c = c_void_p(); rc = L.gpupeer_rank_comm_init(2, None, 0, 0, 1000, byref(c), "
         "byref(err))", {2, 3}),
        ("rank-init-zero-ranks", "c = c_void_p(); rc = L.gpupeer_rank_comm_init(0, b'x' * 128, 0, 0, 1000, byref(c),"
         " byref(err))", {2, 3}),
        ("rank-init-bad-device", "c = c_void_p(); i = create_string_buffer(128); L.gpupeer_get_unique_id(i, None); "
         "rc = L.gpupeer_rank_comm_init(2, i, 0, 99, 200, byref(c), byref(err))", {2, 3}),
        ("rank-init-null-comm", "rc = L.gpupeer_rank_comm_init(2, b'x' * 128, 0, 0, 1000, None, byref(err))", {2, 3}),
        ("null-error-pointer", "rc = L.gpupeer_topology(b'{tmp}/none.json', None, 0, byref(out), None)", {2}),
        ("null-out", "rc = L.gpupeer_topology(b'{fixture:snapshot}', None, 0, None, byref(err))", {2}),
        ("string-free-null", "L.gpupeer_string_free(None); L.gpupeer_error_free(None); rc = 0", {0}),
        ("pointer-device-null", "d = c_int(); rc = L.gpupeer_pointer_device(None, byref(d), byref(err))", {2, 3}),
    ]
    return [case("c-api", name, "capi", code=code, exits=exits) for name, code, exits in calls]


def all_cases(rng, mutations):
    return (argument_cases() + environment_cases() + snapshot_cases(rng, mutations) + kb_cases() + log_cases() +
            results_cases() + output_cases() + stdout_cases() + api_cases() + capi_cases())


# ---- running one case ----------------------------------------------------------------------

API_DRIVER = r"""
import sys, traceback
sys.path.insert(0, {python!r})
try:
    import gpupeer
    from gpupeer import errors
except BaseException as e:
    print("import failed: %s" % e, file=sys.stderr); sys.exit(4)
try:
    {code}
except errors.InternalError as e:
    print("internal error: %s" % e, file=sys.stderr); sys.exit(5)
except (errors.UnsupportedError, errors.CudaError, errors.NvmlError) as e:
    print("gpupeer error: %s" % e, file=sys.stderr); sys.exit(3)
except (errors.SystemCallError, errors.CommTimeoutError) as e:
    print("gpupeer error: %s" % e, file=sys.stderr); sys.exit(4)
except errors.GpupeerError as e:
    print("gpupeer error: %s" % e, file=sys.stderr); sys.exit(2)
except (TypeError, ValueError) as e:
    print("%s: %s" % (type(e).__name__, e), file=sys.stderr); sys.exit(2)
"""

CAPI_DRIVER = r"""
import sys
from ctypes import *
L = CDLL({library!r})
for name in ("gpupeer_error_message",):
    getattr(L, name).restype = c_char_p
out = c_char_p(); err = c_void_p()
{code}
# The code as the CLI's exit: 3 for what this machine cannot do, 4 for the system, 2 for the rest.
EXIT = {0: 0, 4: 3, 5: 3, 6: 3, 8: 4, 10: 4, 11: 5}
if err.value:
    sys.stderr.write("%sgpupeer error %d: %s\n" % ("internal error: " if rc == 11 else "", rc,
                                                  L.gpupeer_error_message(err).decode("utf-8", "replace")))
    L.gpupeer_error_free(err)
elif rc != 0:
    sys.stderr.write("gpupeer error %d without an error record\n" % rc)
sys.exit(EXIT.get(rc, 2))
"""


def _expand(text, tmp, fixtures):
    if not isinstance(text, str):
        return text
    text = text.replace("{tmp}", tmp)
    for k, v in fixtures.items():
        text = text.replace("{fixture:%s}" % k, v)
    return text


class _FifoPeer(threading.Thread):
    """Reads a FIFO (so that a writer is never left waiting) or writes one, until stopped."""

    def __init__(self, path, data=None):
        super().__init__(daemon=True)
        self.path, self.data, self.stop, self.got = path, data, threading.Event(), b""

    def run(self):
        if self.data is None:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
            try:
                while not self.stop.is_set():
                    if select.select([fd], [], [], 0.02)[0]:
                        self.got += os.read(fd, 1 << 16)
            finally:
                os.close(fd)
            return
        while not self.stop.is_set():
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:
                time.sleep(0.01)
                continue
            os.set_blocking(fd, True)
            try:
                os.write(fd, self.data)
            except OSError:
                pass
            os.close(fd)
            return


def _plant(tmp, files, peers):
    for spec in files:
        name, kind = spec[0], spec[1]
        data = spec[2] if len(spec) > 2 else None
        mode = spec[3] if len(spec) > 3 else None
        path = os.path.join(tmp, name)
        if kind == "file":
            with open(path, "wb") as f:
                f.write(data)
        elif kind == "dir":
            os.makedirs(path, exist_ok=True)
        elif kind == "link":
            os.symlink(data, path)
        elif kind in ("fifo-idle", "fifo-reader", "fifo-writer"):
            os.mkfifo(path)
            if kind != "fifo-idle":
                peers.append(_FifoPeer(path, data if kind == "fifo-writer" else None))
                peers[-1].start()
        elif kind == "chardev-null":
            try:
                os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            except OSError:
                os.symlink("/dev/null", path)  # not root: the nearest thing
        if mode is not None:
            os.chmod(path, mode)


def _state(path):
    try:
        st = os.lstat(path)
    except OSError:
        return None
    content = None
    if stat.S_ISREG(st.st_mode):
        with open(path, "rb") as f:
            content = f.read()
    link = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
    return {"type": stat.S_IFMT(st.st_mode), "mode": stat.S_IMODE(st.st_mode), "content": content, "link": link}


def _judge_files(c, tmp, before, rc):
    """Why the planted files show damage, or ''."""
    problems = []
    for name, old in before.items():
        path = os.path.join(tmp, name)
        now = _state(path)
        if old["type"] == stat.S_IFREG:
            if now is None:
                problems.append("%s: lost" % name)
            elif now["type"] != stat.S_IFREG:
                problems.append("%s: no longer a regular file" % name)
            elif now["mode"] != old["mode"]:
                problems.append("%s: mode %o became %o" % (name, old["mode"], now["mode"]))
            elif now["content"] != old["content"] and (rc != 0 or not now["content"]):
                problems.append("%s: changed by a run that failed (exit %s)" % (name, rc) if rc != 0 else
                                "%s: emptied" % name)
        elif now is None or now["type"] != old["type"] or now["link"] != old["link"]:
            problems.append("%s: a %s replaced or removed" % (name, {stat.S_IFIFO: "FIFO", stat.S_IFCHR: "device",
                                                                    stat.S_IFLNK: "link", stat.S_IFDIR: "folder"}
                                                             .get(old["type"], "file")))
    for folder, _, names in os.walk(tmp):
        for n in names:
            if n.startswith(".gpupeer-") and n.endswith(".tmp"):
                problems.append("temporary file %s left behind" % os.path.join(folder, n)[len(tmp) + 1:])
    return "; ".join(problems)


_RAW = {0x1B: "ESC", 0x07: "BEL", 0x08: "BS", 0x0D: "CR"}


def _raw_escape(data):
    text = data.decode("utf-8", "surrogateescape")
    for i, ch in enumerate(text):
        o = ord(ch)
        if o in _RAW or 0x80 <= o <= 0x9F or 0xDC80 <= o <= 0xDC9F:
            return "%s at %d: %r" % (_RAW.get(o, "C1"), i, text[max(0, i - 20):i + 10])
    return ""


CRASH_MARKS = ("internal error", "Traceback (most recent call last)", "AddressSanitizer", "runtime error:",
               "terminate called", "Segmentation fault", "core dumped", "LeakSanitizer", "UndefinedBehaviorSanitizer")
BLOWUP_MARKS = ("bad_alloc", "MemoryError", "Cannot allocate memory", "length_error", "out of memory")
NO_GPU_MARKS = ("no NVIDIA GPU", "no GPU", "no CUDA-capable device")


def run_case(c, opts, fixtures):
    tmp = tempfile.mkdtemp(prefix="case-", dir=opts.workdir)
    peers = []
    try:
        _plant(tmp, c["files"], peers)
        before = {}
        for spec in c["files"]:
            st = _state(os.path.join(tmp, spec[0]))
            if st is not None:
                before[spec[0]] = st
        env = dict(os.environ)
        env.pop("GPUPEER_KB_PATH", None)
        env.update({"PYTHONPATH": os.path.join(ROOT, "python"), "GPUPEER_LIBRARY": opts.library,
                    "PYTHONDONTWRITEBYTECODE": "1"})
        for k, v in c["env"].items():
            env[k] = _expand(v, tmp, fixtures)
        argv = [_expand(a, tmp, fixtures) for a in c["argv"]]
        if c["runner"] == "bin":
            cmd = [opts.gpupeer] + argv
        elif c["runner"] == "py":
            cmd = [sys.executable, "-m", "gpupeer"] + argv
        elif c["runner"] == "api":
            cmd = [sys.executable, "-c", API_DRIVER.replace("{python!r}", repr(os.path.join(ROOT, "python")))
                   .replace("{code}", _expand(c["code"], tmp, fixtures))]
        else:
            cmd = [sys.executable, "-c", CAPI_DRIVER.replace("{library!r}", repr(opts.library))
                   .replace("{code}", _expand(c["code"], tmp, fixtures))]
        out_path, err_path = os.path.join(opts.workdir, "stdout"), os.path.join(opts.workdir, "stderr")
        err_f = open(err_path, "wb")
        if c["stdout"] == "full":
            out_f = open("/dev/full", "wb")
        elif c["stdout"] == "broken-pipe":
            read_end, out_f = os.pipe()
            os.close(read_end)  # the reader is gone before the first write
        else:
            out_f = open(out_path, "wb")
        stdin_data = c["stdin"]
        in_r = None
        if stdin_data is not None:
            in_path = os.path.join(opts.workdir, "stdin")
            with open(in_path, "wb") as f:
                f.write(stdin_data)
            in_r = open(in_path, "rb")
        limit = opts.address_space

        def child_setup():
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            if c["stdout"] == "closed":
                os.close(1)

        env = {k: v.encode("latin-1", "surrogateescape") if any(0x80 <= ord(ch) <= 0xFF for ch in v) else v
               for k, v in env.items()}
        env = {os.fsencode(k): (v if isinstance(v, bytes) else os.fsencode(v)) for k, v in env.items()}
        started = time.monotonic()
        p = subprocess.Popen(cmd, stdin=in_r if in_r else subprocess.DEVNULL, stdout=out_f, stderr=err_f, env=env,
                             cwd=tmp, preexec_fn=child_setup, start_new_session=True)
        if not isinstance(out_f, int):
            out_f.close()
        else:
            os.close(out_f)
        err_f.close()
        if in_r:
            in_r.close()
        rusage, status, hung = None, None, False
        delay = 0.001
        while True:
            pid, status, rusage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > opts.timeout:
                hung = True
                os.killpg(p.pid, signal.SIGKILL)
                _, status, rusage = os.wait4(p.pid, 0)
                break
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
        p.returncode = 0  # reaped here, not by Popen
        seconds = time.monotonic() - started
        rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        for peer in peers:
            peer.stop.set()
            peer.join(2)
        stdout = b""
        if c["stdout"] == "pipe":
            with open(out_path, "rb") as f:
                stdout = f.read()
        with open(err_path, "rb") as f:
            stderr = f.read()
        damage = _judge_files(c, tmp, before, rc)
        cls, detail = classify(c, rc, hung, stdout, stderr, rusage.ru_maxrss, damage, tmp)
        return {"id": c["id"], "channel": c["channel"], "runner": c["runner"], "argv": c["argv"] or None,
                "code": c["code"], "rc": rc, "class": cls, "detail": detail, "seconds": round(seconds, 3),
                "maxrss_mib": rusage.ru_maxrss // 1024,
                "stderr": stderr[:400].decode("utf-8", "backslashreplace")}
    finally:
        for root_dir, dirs, _ in os.walk(tmp):  # a read-only folder inside (a user who is not root)
            for d in dirs:
                os.chmod(os.path.join(root_dir, d), 0o755)
        shutil.rmtree(tmp, ignore_errors=True)


def classify(c, rc, hung, stdout, stderr, maxrss_kib, damage, tmp):
    err_text = stderr.decode("utf-8", "replace")
    both = err_text + stdout.decode("utf-8", "replace")
    if hung:
        return "hang", "still running after the bound"
    if rc < 0 and not (c["sigpipe"] and rc == -signal.SIGPIPE):
        return "crash", "killed by signal %d" % -rc
    for mark in CRASH_MARKS:
        if mark in both:
            return "crash", "output holds %r" % mark
    if maxrss_kib > (1 << 20):
        return "blow-up", "%d MiB resident" % (maxrss_kib >> 10)
    for mark in BLOWUP_MARKS:
        if mark in err_text:
            return "blow-up", "standard error holds %r" % mark
    if damage:
        return "data-loss", damage
    raw = _raw_escape(stderr) or ("" if c["json"] or c["stdout"] != "pipe" else _raw_escape(stdout))
    if raw:
        return "raw-escape", raw
    if c["arg_error"] and (rc == 3 or any(m in err_text for m in NO_GPU_MARKS)):
        return "late-arg", "an argument error answered as no GPU (exit %d)" % rc
    is_error = rc in (2, 4) or (c["runner"] in ("api", "capi") and rc != 0 and rc != 3)
    if is_error and rc != -signal.SIGPIPE:
        if not err_text.strip():
            return "unclear", "exit %d with nothing on standard error" % rc
        names = [n.replace("{tmp}", tmp) for n in c["names"]]
        if names and not any(n.lower() in err_text.lower() for n in names):
            return "unclear", "names none of %s: %s" % (c["names"], err_text.strip()[:160])
    if c["exits"] is not None and rc not in c["exits"] and not (c["sigpipe"] and rc == -signal.SIGPIPE):
        return "wrong-exit", "exit %d, expected one of %s" % (rc, sorted(c["exits"]))
    return "right", ""


# A stand-in for gpupeer that misbehaves as its first word says: the classifier must see each.
FAKE_GPUPEER = r"""#!/bin/sh
case "$1" in
  crash) kill -SEGV $$ ;;
  hang) sleep 60 ;;
  escape) printf 'gpupeer: bad \033[31m%s\n' "$2" >&2; exit 2 ;;
  c1) printf 'gpupeer: bad \302\233 %s\n' "$2" >&2; exit 2 ;;
  lose) : > "$2"; echo "gpupeer: cannot write $2" >&2; exit 4 ;;
  litter) echo x > "$(dirname "$2")/.gpupeer-1-0.tmp"; echo "gpupeer: cannot write $2" >&2; exit 4 ;;
  late) echo "gpupeer: no NVIDIA GPU visible" >&2; exit 3 ;;
  vague) echo "gpupeer: error" >&2; exit 2 ;;
  silent) exit 2 ;;
  blowup) echo "terminate: std::bad_alloc" >&2; exit 4 ;;
  fine) echo "gpupeer: '$2' is not a device number" >&2; exit 2 ;;
esac
"""


def self_test(opts):
    """Runs the classifier on a stand-in that misbehaves in each way; the list of what it got wrong."""
    fake = os.path.join(opts.workdir, "fake-gpupeer")
    with open(fake, "w") as f:
        f.write(FAKE_GPUPEER)
    os.chmod(fake, 0o755)
    planted = [("crash", [], "crash"), ("hang", [], "hang"), ("escape", ["x"], "raw-escape"),
               ("c1", ["x"], "raw-escape"), ("lose", ["{tmp}/out"], "data-loss"),
               ("litter", ["{tmp}/out"], "data-loss"), ("late", [], "late-arg"), ("vague", ["x"], "unclear"),
               ("silent", [], "unclear"), ("blowup", [], "blow-up"), ("fine", ["zero"], "right")]
    saved, opts.gpupeer, timeout, opts.timeout = opts.gpupeer, fake, opts.timeout, 2.0
    wrong = []
    try:
        for word, args, expected in planted:
            c = case("self-test", word, "bin", [word] + args, names=["zero"], exits={2},
                     arg_error=word in ("late", "fine"), files=[("out", "file", OLD, 0o640)])
            got = run_case(c, opts, {})["class"]
            if got != expected:
                wrong.append("%s: classed %s, not %s" % (word, got, expected))
    finally:
        opts.gpupeer, opts.timeout = saved, timeout
    return wrong


def summary(results):
    channels = sorted({r["channel"] for r in results})
    lines = ["%-12s %6s " % ("channel", "cases") + " ".join("%10s" % k for k in CLASSES)]
    totals = collections.Counter()
    for ch in channels:
        rows = [r for r in results if r["channel"] == ch]
        counts = collections.Counter(r["class"] for r in rows)
        totals.update(counts)
        lines.append("%-12s %6d " % (ch, len(rows)) + " ".join("%10d" % counts[k] for k in CLASSES))
    lines.append("%-12s %6d " % ("all", len(results)) + " ".join("%10d" % totals[k] for k in CLASSES))
    return "\n".join(lines), totals


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpupeer", default=os.path.join(ROOT, "build/gpupeer"), help="the binary")
    ap.add_argument("--library", default=os.path.join(ROOT, "build/libgpupeer_c.so"), help="libgpupeer_c.so")
    ap.add_argument("--jsonl", help="write one JSON line per case here")
    ap.add_argument("--channel", action="append", help="only these channels (repeatable)")
    ap.add_argument("--quick", action="store_true", help="a fixed small subset: every channel, a few seconds")
    ap.add_argument("--seed", type=int, default=27, help="seed of the snapshot field mutations")
    ap.add_argument("--mutations", type=int, default=120, help="snapshot field mutations")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per case")
    ap.add_argument("--address-space", type=int, default=4 << 30, help="RLIMIT_AS per case, bytes")
    ap.add_argument("--max-unclear", type=float, default=0.05, help="fraction of unclear cases allowed")
    ap.add_argument("--list", action="store_true", help="list the cases and run none")
    ap.add_argument("--self-test", action="store_true",
                    help="only check the classifier on a stand-in that crashes, hangs, escapes, ... (--quick does too)")
    ap.add_argument("-v", "--verbose", action="store_true", help="a line per case that is not right")
    opts = ap.parse_args(argv)
    for what, path in (("--gpupeer", opts.gpupeer), ("--library", opts.library)):
        if not os.path.isfile(path):
            ap.error("%s %s: no such file (build it first)" % (what, path))
    opts.gpupeer, opts.library = os.path.abspath(opts.gpupeer), os.path.abspath(opts.library)
    cases = all_cases(random.Random(opts.seed), 6 if opts.quick else opts.mutations)
    if opts.channel:
        unknown = set(opts.channel) - {c["channel"] for c in cases}
        if unknown:
            ap.error("unknown channel(s) %s" % ", ".join(sorted(unknown)))
        cases = [c for c in cases if c["channel"] in opts.channel]
    if opts.quick:  # the first three of each channel: every channel, every runner type touched
        seen = collections.Counter()
        quick = []
        for c in cases:
            if seen[c["channel"]] < 3:
                quick.append(c)
            seen[c["channel"]] += 1
        cases = quick
    if opts.list:
        for c in cases:
            print("%-12s %s" % (c["channel"], c["id"].encode("unicode_escape").decode()))
        return 0
    fixtures = {"snapshot": SNAPSHOT_FIXTURE}
    results = []
    out = open(opts.jsonl, "w") if opts.jsonl else None
    with tempfile.TemporaryDirectory(prefix="gpupeer-hostile-") as work:
        opts.workdir = work
        if opts.quick or opts.self_test:
            wrong = self_test(opts)
            for w in wrong:
                print("self-test: %s" % w)
            if wrong or opts.self_test:
                print("self-test: %s" % ("FAILED" if wrong else "every planted fault classed as planted"))
                return 1 if wrong else 0
            print("self-test: every planted fault classed as planted")
        for c in cases:
            r = run_case(c, opts, fixtures)
            results.append(r)
            if out:
                out.write(json.dumps(r, ensure_ascii=True) + "\n")
                out.flush()
            if opts.verbose and r["class"] != "right":
                print("%-10s %s: %s" % (r["class"], r["id"].encode("unicode_escape").decode(), r["detail"]))
    if out:
        out.close()
    table, totals = summary(results)
    print(table)
    bad = sum(totals[k] for k in BAD_CLASSES)
    unclear = totals["unclear"] / max(1, len(results))
    print("unclear: %.1f%% of %d cases (at most %.0f%%)" % (100 * unclear, len(results), 100 * opts.max_unclear))
    return 1 if bad or unclear >= opts.max_unclear else 0


if __name__ == "__main__":
    sys.exit(main())
