"""Whole-pass policies in Python: the queue and the cluster in, decisions
out, every decision checked by the engine, deterministic."""

from __future__ import annotations

import pytest

import gresim
from conftest import SCENARIOS

MIG = SCENARIOS / "mig_packing.json"


def starts(o):
    return [(r["job_id"], r["start"], r["end"], r["nodes"], r["gpus"]) for r in o.record_list()]


@gresim.pass_policy
def fifo(view):
    """Strict FIFO: the queue in priority order; gresim starts jobs in that
    order until the first that does not fit."""
    return {"order": [j.id for j in view.jobs]}


class GreedyFifo:
    """The same FIFO through `start`: it counts free GPUs itself, and
    starts single-node jobs in queue order while one node has room."""

    name = "greedy"

    def __init__(self):
        self.views = []

    def schedule(self, view):
        self.views.append(view)
        free = list(view.free_gpus)
        out = []
        for j in view.jobs:
            if j.min_nodes != 1 or j.gpus_per_job:
                break
            # Nodes of its GPU type are unknown here: ask only for a node
            # with as many free GRES as the job needs, cons_tres places it.
            node = next((n for n, f in enumerate(free) if f >= j.gpus_per_node), None)
            if node is None:
                break
            free[node] -= j.gpus_per_node
            out.append(j.id)
        return {"order": out}


def test_a_python_fifo_starts_what_slurms_main_pass_starts():
    # mig_packing has one partition: Slurm's main pass (`fifo`, no
    # backfill) is a strict FIFO there, and the Python FIFO's decisions go
    # through the same cons_tres on the same live state.
    a = gresim.run(MIG, policy=fifo, seed=4)
    b = gresim.run(MIG, policy="fifo", seed=4)
    assert a.policy == "fifo"
    assert starts(a) == starts(b)
    assert a.summary["wait"] == b.summary["wait"]
    # Deterministic: the same again.
    assert a.record_list() == gresim.run(MIG, policy=fifo, seed=4).record_list()


def test_the_view_and_start_decisions():
    g = GreedyFifo()
    o = gresim.run(MIG, policy=g, seed=2)
    assert o.policy == "greedy" and o.summary["jobs"] == 400
    assert all(r["state"] == "COMPLETED" for r in o.record_list())
    assert len(g.views) > 300
    v = g.views[0]
    assert v.now >= 0 and len(v.node_names) == 4
    assert v.total_gpus == [8, 8, 44, 44] and v.total_cpus == [128] * 4
    assert v.partition_nodes("gpu") == [0, 1, 2, 3]
    j = v.jobs[0]
    assert isinstance(j, gresim.QueuedJob)
    assert j.partition == "gpu" and j.partitions == ["gpu"]
    assert j.user and j.submit <= v.now and j.time_limit > 0
    assert j.gpus == j.gpus_per_node * j.min_nodes + j.gpus_per_job
    busy = [x for x in g.views if sum(x.free_gpus) < sum(x.total_gpus)]
    assert busy, "some pass sees GPUs in use"
    assert len(busy[0].free_gpu_indices(0)) == busy[0].free_gpus[0]
    # Deterministic.
    again = gresim.run(MIG, policy=GreedyFifo(), seed=2)
    assert again.record_list() == o.record_list()


def test_start_with_nodes_and_reasons():
    seen = {}

    def pick(view):
        # Each job on cons_tres's node of its own choosing: the first node
        # whose free GPU indices hold it, by index; the rest get a reason.
        out, reasons = [], {}
        free = {n: view.free_gpu_indices(n) for n in range(len(view.node_names))}
        for j in view.jobs:
            if j.min_nodes == 1 and j.gpu_type == "a100" and j.gpus_per_node:
                node = next((n for n in (0, 1) if len(free[n]) >= j.gpus_per_node), None)
                if node is not None:
                    gpus, free[node] = free[node][: j.gpus_per_node], free[node][j.gpus_per_node :]
                    out.append({"job": j.id, "partition": "gpu", "nodes": [(view.node_names[node], gpus)]})
                    continue
            reasons[j.id] = "waiting for my turn"
        seen["n"] = seen.get("n", 0) + len(out)
        return {"start": out, "reasons": reasons}

    o = gresim.run(MIG, policy=gresim.pass_policy(pick, name="pick"), seed=1)
    recs = o.record_list()
    assert seen["n"] > 0 and o.policy == "pick"
    started = [r for r in recs if r["start"] is not None]
    assert len(started) == seen["n"]
    assert all(r["nodes"] in ("gpu01", "gpu02") for r in started)
    pending = [r for r in recs if r["state"] == "PENDING"]
    assert pending and all(r["reason"] == "None" for r in pending)


def bad(decisions, after=0):
    calls = []

    def schedule(view):  # bad_schedule_line
        calls.append(view)
        if len(calls) <= after or not view.jobs:
            return None
        return decisions(view)

    return gresim.pass_policy(schedule, name="bad")


bad_schedule_line = next(
    i for i, line in enumerate(open(__file__, encoding="utf-8"), 1) if line.rstrip().endswith("# bad_schedule_line")
)


@pytest.mark.parametrize(
    "decide,needle",
    [
        (lambda v: {"start": [123456]}, "start: job 123456 is not pending in the queue"),
        (lambda v: {"start": [v.jobs[0].id, v.jobs[0].id]}, "is started twice"),
        (lambda v: {"start": [j.id for j in v.jobs] * 0 + [{"job": v.jobs[0].id, "nodes": [("gpu01", [0, 1, 2, 3, 4, 5, 6, 7])]}]},
         "does not fit"),
        (lambda v: {"reasons": {v.jobs[0].id: 42}}, "reasons: job"),
        (lambda v: {"order": [v.jobs[0].id, v.jobs[0].id]}, "order: job"),
        (lambda v: {"start": [{"job": v.jobs[0].id, "partition": "nope"}]}, "unknown partition 'nope'"),
        (lambda v: ["not", "a", "dict"], "expected None or a dict"),
        (lambda v: {"begin": []}, "unknown key 'begin'"),
    ],
    ids=["unknown-id", "twice", "no-fit", "reason-not-str", "order-twice", "partition", "shape", "key"],
)
def test_invalid_decisions_raise_policy_error(decide, needle):
    with pytest.raises(gresim.PolicyError) as e:
        gresim.run(MIG, policy=bad(decide))
    msg = str(e.value)
    assert needle in msg, msg
    assert msg.startswith(str(MIG) + ": policy bad: "), msg
    # No exception of the policy's: where the deciding function is defined.
    assert e.value.traceback is None and e.value.__cause__ is None
    assert e.value.source.endswith(f"test_pass_policy.py:{bad_schedule_line}"), e.value.source
    assert "the decision was made by schedule (" in msg
    if needle == "reasons: job":
        assert "expected a string, got 42" in msg


def test_an_exception_in_a_pass_policy_carries_its_traceback():
    def schedule(view):
        if view.now > 3000:
            return {"order": [j.id for j in view.jobs][::-1]} if helper(view) else None
        return {"order": [j.id for j in view.jobs]}

    def helper(view):
        return view.jobs[0].missing_attribute

    with pytest.raises(gresim.PolicyError) as e:
        gresim.run(MIG, policy=gresim.pass_policy(schedule, name="boom"))
    err = e.value
    assert isinstance(err.__cause__, AttributeError)
    assert err.traceback and "in helper" in err.traceback and "missing_attribute" in err.traceback
    assert "Traceback (most recent call last)" in str(err)
    assert "policy boom: at t=" in str(err)
