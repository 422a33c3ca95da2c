"""gresim.compare and gresim.sweep: the computations of `sim compare` and
`sim sweep`, byte for byte the files they write."""

from __future__ import annotations

import filecmp
import json

import pytest

import gresim
from conftest import SCENARIOS, run_sim

MIG = SCENARIOS / "mig_packing.json"
SWEEP = SCENARIOS / "sweeps" / "backfill_load.sweep.json"


def same_tree(a, b):
    """Every file under `a` is under `b` with the same bytes, and back."""
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b
    assert files_a
    for f in files_a:
        assert filecmp.cmp(a / f, b / f, shallow=False), f"{f} differs"


def test_compare_writes_what_sim_compare_writes(tmp_path, sim_bin):
    pols = ["slurm", "best-fit", "fifo"]
    r = run_sim(sim_bin, "compare", MIG, "--policies", ",".join(pols), "--seed", 3,
                "--out", tmp_path / "cli", "--quiet")
    assert r.returncode == 0, r.stderr
    c = gresim.compare(MIG, pols, seed=3, out=tmp_path / "py")
    same_tree(tmp_path / "cli", tmp_path / "py")
    doc = json.loads((tmp_path / "cli" / "compare.json").read_text())
    assert c.row_list() == doc["policies"]
    assert [r["policy"] for r in c.row_list()] == pols
    assert c.table() == (tmp_path / "cli" / "compare.txt").read_text()
    # Each outcome is the run gresim.run makes.
    assert c.outcomes["best-fit"].summary == gresim.run(MIG, "best-fit", 3).summary
    # Without `out`, the same rows and nothing written.
    assert gresim.compare(MIG, pols, seed=3).row_list() == c.row_list()


def test_sweep_writes_what_sim_sweep_writes(tmp_path, sim_bin):
    r = run_sim(sim_bin, "sweep", SWEEP, "--out", tmp_path / "cli", "--quiet")
    assert r.returncode == 0, r.stderr
    s = gresim.sweep(SWEEP, out=tmp_path / "py", threads=2)
    same_tree(tmp_path / "cli", tmp_path / "py")
    doc = json.loads((tmp_path / "cli" / "results.json").read_text())
    assert s.row_list() == doc["rows"] and len(s.row_list()) == 36
    assert s.head["fingerprint"] == doc["fingerprint"]
    printed = run_sim(sim_bin, "sweep", SWEEP, "--out", tmp_path / "cli2").stdout
    assert s.table() in printed
    # One thread or many, with or without files: the same rows.
    assert gresim.sweep(SWEEP, threads=1).row_list() == s.row_list()


def test_sweep_and_compare_errors_are_sims(tmp_path, sim_bin):
    bad = tmp_path / "bad.sweep.json"
    bad.write_text(json.dumps({"scenario": str(SWEEP.parent / "backfill_cluster.json"),
                               "parameters": {"bf_window": [60, 60]}}))
    r = run_sim(sim_bin, "sweep", bad, "--out", tmp_path / "o")
    assert r.returncode == 2
    try:
        gresim.sweep(bad)
    except gresim.ScenarioError as e:
        assert "error: " + str(e) == r.stderr.strip()
        assert e.path == "parameters.bf_window[1]"
    else:
        raise AssertionError("no error")
    try:
        gresim.compare(MIG, ["slurm", "nope"])
    except gresim.UsageError as e:
        assert str(e).startswith("unknown policy 'nope'")
    else:
        raise AssertionError("no error")


def test_fgd_writes_what_sim_fgd_writes(tmp_path, sim_bin):
    r = run_sim(sim_bin, "fgd", "--seeds", "42,43", "--policies", "fgd,bestfit,random",
                "--out", tmp_path / "cli")
    assert r.returncode == 0, r.stderr
    f = gresim.fgd(seeds=[42, 43], policies=["fgd", "bestfit", "random"])
    f.write(tmp_path / "py")
    for name in ("fgd_runs.csv", "fgd_summary.csv"):
        cli = (tmp_path / "cli" / name).read_text()
        assert (tmp_path / "py" / name).read_text() == cli, name
    # The cluster's size as sim fgd's header prints it.
    assert f"{f.nodes} nodes / {f.gpus} GPUs, {f.tasks} original tasks" in r.stdout
    rows = f.summary_list()
    assert {r["sc_policy"] for r in rows} == {"06-FGD", "05-BestFit", "01-Random"}
    # FGD allocates more than Random at 130 % arrived, as the paper reports.
    alloc = {r["sc_policy"]: r["mean"] for r in rows
             if r["metric"] == "gpu_alloc_ratio_pct" and r["arrived_gpu_request_pct"] == 130}
    assert alloc["06-FGD"] > alloc["01-Random"]
    assert all(r["published_mean"] is not None for r in rows)
    with pytest.raises(gresim.UsageError, match="unknown policy 'nope'"):
        gresim.fgd(seeds=[42], policies=["nope"])
    with pytest.raises(gresim.ScenarioError, match="bad workload name"):
        gresim.fgd(seeds=[42], workload="../x")
