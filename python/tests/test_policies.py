"""Python placement policies: in-process, checked by the engine, deterministic."""

from __future__ import annotations

import pytest

import gresim
from conftest import SCENARIOS

MIG = SCENARIOS / "mig_packing.json"
DDP = SCENARIOS / "ddp_2x8.json"


def best_fit(q):
    """Single-node GPU jobs on the candidate with the fewest free GPUs of
    their type (then CPUs); everything else as Slurm places it."""
    need = q.gpus_per_node
    if q.min_nodes != 1 or need == 0:
        return None
    best = None
    for node, free, cpus in zip(q.candidates, q.free_gpu_counts, q.free_cpus):
        if free >= need and (best is None or (free, cpus) < best[:2]):
            best = (free, cpus, node)
    if best is None:
        return None
    return [(best[2], q.free_gpus(best[2])[:need])]


def test_a_python_placement_runs_and_is_deterministic():
    calls = []

    def slurms(q):
        calls.append(q)
        return None

    a = gresim.run(MIG, policy=slurms)
    # Answering None everywhere is Slurm's own choice: the slurm run exactly.
    assert a.record_list() == gresim.run(MIG, policy="slurm").record_list()
    assert a.policy == "slurms"
    assert 300 < len(calls) <= 400 + 50
    q = calls[0]
    assert q.partition and q.candidates and len(q.free_gpu_counts) == len(q.candidates)
    assert q.slurm and q.slurm[0][0] in q.candidates
    node, gpus = q.slurm[0]
    assert set(gpus) <= set(q.free_gpus(node))
    assert q.node_name(node).startswith(("a100", "mig"))
    # A policy of its own changes placements, the same way every time.
    b = gresim.run(MIG, policy=best_fit, seed=3)
    c = gresim.run(MIG, policy=best_fit, seed=3)
    assert b.record_list() == c.record_list()
    assert b.record_list() != gresim.run(MIG, policy="slurm", seed=3).record_list()
    assert b.summary["jobs"] == 400 and b.policy == "best_fit"


def test_objects_names_and_waiting():
    class Packer:
        name = "packer"

        def __init__(self):
            self.asked = 0

        def place(self, q):
            self.asked += 1
            return best_fit(q)

    p = Packer()
    o = gresim.run(MIG, policy=p, seed=3)
    assert p.asked > 300 and o.policy == "packer"
    assert o.record_list() == gresim.run(MIG, policy=best_fit, seed=3).record_list()
    # [] keeps a job waiting: a policy that never places anything ends with
    # every job still pending, the reason Slurm gives a job that does not fit.
    o = gresim.run(DDP, policy=lambda q: [])
    states = {r["state"] for r in o.record_list()}
    assert states == {"PENDING"}, states


def bad(answer):
    def place(q):
        return answer(q)

    return place


@pytest.mark.parametrize(
    "answer,needle",
    [
        (lambda q: [("nosuchnode", [0])], "unknown node 'nosuchnode'"),
        (lambda q: [(10_000, [0])], "unknown node 10000"),
        (lambda q: [(q.slurm[0][0], [63])], "has GPU indices 0.."),
        (lambda q: [(q.slurm[0][0], [])] if q.gpus_per_node else None, "GPU(s) on node"),
        (lambda q: "everywhere", "expected None, [] or a list of (node, [gpu, …])"),
        (lambda q: [(q.slurm[0][0], ["x"])], "'x' is no GPU index"),
    ],
    ids=["name", "index", "gpu-index", "too-few-gpus", "shape", "gpu-type"],
)
def test_impossible_placements_raise_policy_error(answer, needle):
    with pytest.raises(gresim.PolicyError) as e:
        gresim.run(MIG, policy=bad(answer))
    assert needle in str(e.value), str(e.value)
    assert str(e.value).startswith(str(MIG) + ": policy place: ")


def test_a_gpu_that_is_not_free_is_refused():
    first = {}

    def reuse(q):
        # The first job's GPUs again, for a later job of as many GPUs on
        # that node while the first one still holds them.
        node, gpus = q.slurm[0]
        if "choice" not in first:
            if gpus:
                first["choice"] = (node, gpus)
            return None
        n0, g0 = first["choice"]
        if n0 == node and len(g0) == len(gpus) and not set(g0) <= set(q.free_gpus(n0)):
            return [(n0, g0)]
        return None

    with pytest.raises(gresim.PolicyError) as e:
        gresim.run(MIG, policy=reuse)
    assert "is not free" in str(e.value), str(e.value)


def test_an_exception_in_the_policy_keeps_its_traceback():
    asked = []

    def boom(q):
        asked.append(q)
        if len(asked) == 5:
            raise ZeroDivisionError("no multi-GPU jobs here")
        return None

    with pytest.raises(gresim.PolicyError) as e:
        gresim.run(MIG, policy=boom)
    assert "ZeroDivisionError: no multi-GPU jobs here" in str(e.value)
    assert len(asked) == 5  # not asked again after it failed
    cause = e.value.__cause__
    assert isinstance(cause, ZeroDivisionError)
    assert cause.__traceback__ is not None
    import traceback

    frames = traceback.extract_tb(cause.__traceback__)
    assert any(f.name == "boom" for f in frames)
    with pytest.raises(TypeError):
        gresim.run(MIG, policy=42)
