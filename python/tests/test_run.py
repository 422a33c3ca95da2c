"""gresim.run: the library's entry point from Python, byte for byte what
`sim run` writes, and the errors `sim` prints."""

from __future__ import annotations

import json
import sys
import types

import pytest

import gresim
from conftest import SCENARIOS, run_sim

MIG = SCENARIOS / "mig_packing.json"
FILES = ["records.json", "records.csv", "summary.json", "run.json", "utilization.svg"]


@pytest.mark.parametrize(
    "policy,seed", [(None, None), ("best-fit", 7), ("easy", 3)], ids=["own", "best-fit-7", "easy-3"]
)
def test_outputs_equal_the_cli_byte_for_byte(tmp_path, sim_bin, policy, seed):
    cli_dir, py_dir = tmp_path / "cli", tmp_path / "py"
    args = ["run", MIG, "--out", cli_dir, "--quiet"]
    if policy:
        args += ["--policy", policy]
    if seed is not None:
        args += ["--seed", seed]
    r = run_sim(sim_bin, *args)
    assert r.returncode == 0, r.stderr
    outcome = gresim.run(str(MIG), policy=policy, seed=seed)
    outcome.write(py_dir)
    for f in FILES:
        cli = (cli_dir / f).read_bytes()
        assert len(cli) > 100, f
        assert (py_dir / f).read_bytes() == cli, f"{f} differs from sim run's"
    # What the properties give is what the files hold.
    assert outcome.summary == json.loads((cli_dir / "summary.json").read_text())
    assert outcome.record_list() == json.loads((cli_dir / "records.json").read_text())
    assert outcome.policy == (policy or "slurm")
    assert outcome.seed == (seed if seed is not None else 42)


def test_out_writes_and_a_loaded_scenario_runs_alike(tmp_path):
    sc = gresim.load(MIG)
    assert (sc.name, sc.seed, sc.policy) == ("mig_packing", 42, "slurm")
    a = gresim.run(sc, seed=5, out=tmp_path / "a")
    b = gresim.run(str(MIG), seed=5)
    assert a.summary == b.summary
    assert a.record_list() == b.record_list()
    assert (tmp_path / "a" / "records.csv").read_text().startswith("job_id,")
    # Another seed draws another workload.
    assert gresim.run(sc, seed=6).record_list() != a.record_list()


def test_a_dict_runs_as_its_file():
    doc = json.loads(MIG.read_text())
    a = gresim.run(doc, policy="spread")
    b = gresim.run(MIG, policy="spread")
    assert a.summary == b.summary
    assert a.record_list() == b.record_list()
    assert len(a.record_list()) == 400


def test_records_and_utilization_without_and_with_pandas(monkeypatch):
    o = gresim.run(MIG)
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas fails
    recs = o.records
    assert isinstance(recs, list) and len(recs) == 400
    assert {"job_id", "wait", "nodes", "gpus"} <= recs[0].keys()
    util = o.utilization
    assert isinstance(util, dict)
    n = len(util["t"])
    assert n > 10 and all(len(v) == n for v in util.values())
    assert util["t"] == sorted(util["t"])
    assert max(util["gpus_allocated"]) <= util["gpus_available"][0]
    # With pandas, a DataFrame is built from the same rows and columns.
    fake = types.ModuleType("pandas")
    fake.DataFrame = lambda data: ("DataFrame", data)
    monkeypatch.setitem(sys.modules, "pandas", fake)
    assert o.records == ("DataFrame", recs)
    assert o.utilization == ("DataFrame", util)


def cli_error(sim_bin, *args, cwd=None) -> str:
    r = run_sim(sim_bin, *args, cwd=cwd)
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("error: "), r.stderr
    return r.stderr.removeprefix("error: ").rstrip("\n")


def test_scenario_errors_carry_what_the_cli_prints(tmp_path, sim_bin):
    doc = json.loads(MIG.read_text())
    doc["cluster"]["nodes"][0]["gpus"] = [{"type": "a100", "count": "many"}]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc, indent=2))
    with pytest.raises(gresim.ScenarioError) as e:
        gresim.run(str(bad))
    assert str(e.value) == cli_error(sim_bin, "run", bad, "--out", tmp_path / "o")
    assert e.value.file == str(bad)
    assert e.value.path.startswith("cluster.nodes[0].gpus[0]")
    assert isinstance(e.value.line, int) and e.value.line > 1
    assert not (tmp_path / "o").exists()
    # A syntax error: the line and column.
    bad.write_text('{"schema_version": 1,\n  "cluster": [}\n')
    with pytest.raises(gresim.ScenarioError) as e:
        gresim.run(bad)
    assert str(e.value) == cli_error(sim_bin, "run", bad, "--out", tmp_path / "o")
    assert (e.value.line, e.value.column) == (2, 15)
    # A missing file.
    with pytest.raises(gresim.ScenarioError) as e:
        gresim.run(tmp_path / "none.json")
    assert str(e.value) == cli_error(sim_bin, "run", tmp_path / "none.json")
    # The same error from a dict names the JSON path, and no line.
    with pytest.raises(gresim.ScenarioError) as e:
        gresim.run(doc)
    assert e.value.file == "<dict>" and e.value.line is None
    assert e.value.path.startswith("cluster.nodes[0].gpus[0]")
    assert str(e.value).startswith("<dict>: at cluster.nodes[0].gpus[0]")


def test_unknown_policy_and_bad_arguments(sim_bin):
    with pytest.raises(gresim.UsageError) as e:
        gresim.run(MIG, policy="slrum")
    assert str(e.value) == cli_error(sim_bin, "run", MIG, "--policy", "slrum")
    assert e.value.argument == "policy"
    with pytest.raises(TypeError):
        gresim.run(42)
    assert gresim.policies()[:3] == ["slurm", "fifo", "first-fit"]
