"""gresim.env.SchedulingEnv: seeded, deterministic, documented shapes, and
episodes that end."""

from __future__ import annotations

import random
import runpy
import sys

import numpy as np
import pytest

import gresim
from conftest import REPO, SCENARIOS
from gresim.env import NODE_FEATURES, QUEUE_FEATURES, SchedulingEnv

MIG = SCENARIOS / "mig_packing.json"


def episode(env, seed, policy):
    obs, info = env.reset(seed=seed)
    trace = [obs]
    total, started = 0.0, 0
    while True:
        obs, r, term, trunc, info = env.step(policy(obs))
        trace.append(obs)
        total += r
        started += info["started"] is not None
        if term or trunc:
            return trace, total, started, term, trunc


def random_policy(seed):
    rng = random.Random(seed)
    return lambda obs: rng.choice(np.flatnonzero(obs["mask"]).tolist())


def test_reset_with_a_seed_gives_identical_observations():
    env = SchedulingEnv(MIG, window=8)
    a, ia = env.reset(seed=7)
    b, ib = env.reset(seed=7)
    for k in a:
        assert np.array_equal(a[k], b[k]), k
    assert ia == ib and ia["seed"] == 7
    # A whole episode with the same actions is the same episode.
    t1, r1, s1, _, _ = episode(env, 7, random_policy(1))
    t2, r2, s2, _, _ = episode(env, 7, random_policy(1))
    assert (r1, s1) == (r2, s2) and len(t1) == len(t2)
    assert all(np.array_equal(x["queue"], y["queue"]) for x, y in zip(t1, t2))
    # Another seed, another workload.
    c, _ = env.reset(seed=8)
    t3, *_ = episode(env, 8, random_policy(1))
    assert len(t3) != len(t1) or any(
        not np.array_equal(x["queue"], y["queue"]) for x, y in zip(t1, t3)
    )


def test_observation_shapes_and_dtypes():
    env = SchedulingEnv(MIG, window=12)
    obs, info = env.reset(seed=1)
    assert set(obs) == {"queue", "nodes", "mask"}
    assert obs["queue"].shape == (12, len(QUEUE_FEATURES)) == (12, 9)
    assert obs["queue"].dtype == np.float32
    assert obs["nodes"].shape == (4, len(NODE_FEATURES)) == (4, 8)
    assert obs["nodes"].dtype == np.float32
    assert obs["mask"].shape == (13,) and obs["mask"].dtype == np.int8
    assert obs["mask"][-1] == 1
    # Padded rows are zero; present rows have present = 1.
    n = info["queued"]
    assert n >= 1 and len(info["window_jobs"]) == min(n, 12)
    assert (obs["queue"][: min(n, 12), 0] == 1).all()
    assert (obs["queue"][min(n, 12) :] == 0).all()
    # Nodes: free <= total, all available, idle at the first pass.
    nodes = obs["nodes"]
    assert (nodes[:, 0] <= nodes[:, 1]).all() and (nodes[:, 4] == 1).all()
    assert nodes[:, 1].tolist() == [8, 8, 44, 44]
    assert obs["mask"][0] == obs["queue"][0, 7] == 1
    # Nothing runs yet: no running jobs, no planned ends.
    assert (nodes[:, 5] == 0).all() and (nodes[:, 6:8] == -1).all()


def test_observation_shows_running_jobs_and_gpu_types():
    env = SchedulingEnv(MIG, window=12)
    obs, info = env.reset(seed=1)
    types = env.gpu_types
    assert "a100_1g.10gb" in types and "a100" in types
    q = obs["queue"][: min(info["queued"], 12)]
    # Every job of this mix names a type; the code points into gpu_types.
    assert ((q[:, 8] >= 1) & (q[:, 8] <= len(types))).all()
    col = QUEUE_FEATURES.index("gpu_type")
    limit = obs["queue"][0, QUEUE_FEATURES.index("time_limit")]
    t0 = info["time"]
    obs, _, _, _, info = env.step(0)
    assert info["started"] is not None
    n = obs["nodes"]
    busy = n[:, NODE_FEATURES.index("running_jobs")] > 0
    assert busy.sum() == 1 and n[busy, 5].item() == 1
    nxt, last = n[busy, 6].item(), n[busy, 7].item()
    # Started at t0: its planned end is t0 plus its time limit (the next
    # observation may come later, when the next job is queued).
    assert 0 < nxt <= last and (limit < 0 or nxt == limit - (info["time"] - t0))
    assert (n[~busy, 6:8] == -1).all()
    # Letting time go on queues jobs of several types, each shown as its own.
    seen = set()
    for _ in range(200):
        obs, _, term, _, info = env.step(env.none_action)
        q = obs["queue"][: min(info["queued"], 12)]
        seen |= set(q[:, col].tolist())
        if len(seen) >= 2 or term:
            break
    assert len(seen) >= 2 and seen <= set(range(1, len(types) + 1))


@pytest.mark.parametrize("reward", ["wait", "slowdown", "utilization"])
def test_a_full_episode_terminates(reward):
    env = SchedulingEnv(MIG, window=16, reward=reward)
    trace, total, started, term, trunc = episode(env, 3, random_policy(3))
    assert term and not trunc
    assert started == 400  # a random agent that never idles runs every job
    out = env.outcome()
    assert out.summary["jobs"] == 400
    assert all(r["state"] == "COMPLETED" for r in out.record_list())
    if reward == "wait":
        # Minus the job-hours of waiting: the summary's mean wait x jobs.
        assert total == pytest.approx(-out.summary["wait"]["mean"] * 400 / 3600, rel=1e-6)
    elif reward == "utilization":
        assert 0 < total
    else:
        assert total <= -400  # each bounded slowdown is at least 1
    with pytest.raises(RuntimeError):
        env.step(0)


def test_none_lets_time_go_on_and_invalid_actions_count_as_none():
    env = SchedulingEnv(MIG, window=4, max_steps=50)
    obs, info = env.reset(seed=1)
    t0 = info["time"]
    obs, r, term, trunc, info = env.step(env.none_action)
    assert info["started"] is None and not info["invalid"]
    assert info["time"] > t0 and r <= 0
    empty = int(np.flatnonzero(obs["queue"][:, 0] == 0)[0]) if (obs["queue"][:, 0] == 0).any() else None
    if empty is not None:
        _, _, _, _, info = env.step(empty)
        assert info["invalid"] and info["started"] is None
    with pytest.raises(ValueError):
        env.step(99)
    steps = 2
    trunc = False
    while not trunc:
        _, _, term, trunc, _ = env.step(env.none_action)
        steps += 1
        assert not term
    assert steps == 50


def test_gymnasium_spaces_when_installed():
    env = SchedulingEnv(MIG, window=5)
    try:
        import gymnasium
    except ImportError:
        assert not hasattr(env, "action_space")
        return
    assert isinstance(env, gymnasium.Env)
    obs, _ = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    assert env.action_space.n == 6


def test_bad_arguments():
    with pytest.raises(gresim.UsageError):
        SchedulingEnv(MIG, reward="throughput")
    with pytest.raises(ValueError):
        SchedulingEnv(MIG, window=0)


def test_the_random_agent_example_runs(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["random_agent.py", str(MIG)])
    runpy.run_path(str(REPO / "examples" / "python" / "random_agent.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "episode reward" in out and "jobs started: 400" in out and "mean wait" in out
