"""Diagnosis from Python against the fixtures: same documents as the CLI's --json."""

import glob
import json
import os
import subprocess

import pytest

import gpupeer
from conftest import DATA, data

SNAPSHOTS = sorted(glob.glob(os.path.join(DATA, "snapshot_*.json")))
PEER_ACCESS_MESSAGE = "CUDA error: peer access is not supported between these two devices"


def cli_json(cli, *args):
    run = subprocess.run([cli, *args, "--json"], capture_output=True, text=True, check=False)
    return json.loads(run.stdout)


@pytest.mark.parametrize("path", SNAPSHOTS, ids=os.path.basename)
def test_load_snapshot_reads_every_fixture(path):
    snap = gpupeer.load_snapshot(path)
    with open(path) as f:
        raw = json.load(f)
    assert snap["schema"] == "gpupeer.snapshot"
    assert len(snap["gpus"]) == len(raw["gpus"])
    assert [g["pciBusId"] for g in snap["gpus"]] == [g["pciBusId"] for g in raw["gpus"]]


@pytest.mark.parametrize("path", SNAPSHOTS, ids=os.path.basename)
def test_topology_and_doctor_match_the_cli(cli, path):
    if gpupeer.load_snapshot(path)["gpus"]:
        assert gpupeer.topology(path) == cli_json(cli, "topo", "--snapshot", path)
    assert gpupeer.doctor(path) == cli_json(cli, "doctor", "--snapshot", path)


def test_a_snapshot_dict_stands_for_its_file():
    path = data("snapshot_h200_4gpu_captured.json")
    snap = gpupeer.load_snapshot(path)
    assert gpupeer.topology(snap) == gpupeer.topology(path)
    assert gpupeer.doctor(snap) == gpupeer.doctor(path)


def test_topology_names_the_path_of_each_pair():
    topo = gpupeer.topology(data("snapshot_pcie_4gpu_two_switches.json"))
    text = json.dumps(topo)
    assert "PIX" in text or "PXB" in text, text[:400]


def test_doctor_finds_missing_p2p_and_names_the_kb_entry():
    report = gpupeer.doctor(data("snapshot_consumer_2gpu_no_p2p.json"))
    assert report["worst"] in ("warning", "error")
    assert report["findings"], report
    assert any(f["kbId"] for f in report["findings"]), report["findings"]


def test_snapshot_of_this_machine_never_fails():
    snap = gpupeer.snapshot()
    assert snap["schema"] == "gpupeer.snapshot"
    assert "hostname" in snap


def test_explain_text_matches_the_cli(cli):
    result = gpupeer.explain(PEER_ACCESS_MESSAGE)
    assert result["matches"], result
    assert result == cli_json(cli, "explain", PEER_ACCESS_MESSAGE)


def test_explain_reads_a_log_file(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("step 1 ok\nRuntimeError: %s\nstep 2\n" % PEER_ACCESS_MESSAGE)
    by_path = gpupeer.explain(log)
    by_str = gpupeer.explain(str(log))
    assert by_path == by_str
    assert by_path["linesRead"] == 3
    assert by_path["matches"][0]["line"] == 2


def test_explain_of_a_benign_log_matches_nothing():
    result = gpupeer.explain(data("benign_log.txt"))
    assert result["linesRead"] > 0
    assert result["matches"] == []


def test_explain_top_limits_the_matches():
    assert len(gpupeer.explain(PEER_ACCESS_MESSAGE, top=1)["matches"]) <= 1
