"""The cost of a Python whole-pass policy and of a SchedulingEnv step
(docs/performance.md, "Python whole-pass policies and the environment").

    cargo run --release -p gresim-benches --example bench_run -- 10000 --json > bench10k.json
    python examples/python/bench_pass.py bench10k.json [scenarios/mig_packing.json]

1. The scenario under `fifo` in Rust (Slurm's main pass, no backfill) and
   under a strict FIFO written in Python as a whole-pass policy (the queue's
   ids as `order`): on a one-partition cluster the same decisions (checked),
   so the difference in wall time over the number of passes is the cost of
   a Python pass: the view of the queue and the nodes, the call, reading
   and checking the decisions.
2. One SchedulingEnv episode on the second scenario with a random agent
   (masked actions): wall time per step.
"""

from __future__ import annotations

import random
import sys
import time

import numpy as np

import gresim
from gresim.env import SchedulingEnv


class Fifo:
    name = "py_fifo"

    def __init__(self):
        self.passes = 0
        self.jobs_seen = 0

    def schedule(self, view):
        self.passes += 1
        jobs = view.jobs
        self.jobs_seen += len(jobs)
        return {"order": [j.id for j in jobs]}


def timed(f):
    t = time.perf_counter()
    r = f()
    return r, time.perf_counter() - t


def main():
    sc = gresim.load(sys.argv[1])
    env_scenario = sys.argv[2] if len(sys.argv) > 2 else "scenarios/mig_packing.json"
    rust, t_rust = timed(lambda: gresim.run(sc, policy="fifo", reasons=False))
    py = Fifo()
    pyo, t_py = timed(lambda: gresim.run(sc, policy=py, reasons=False))
    same = [(r["start"], r["nodes"], r["gpus"]) for r in rust.record_list()] == [
        (r["start"], r["nodes"], r["gpus"]) for r in pyo.record_list()
    ]
    print(f"scenario {sc.name}: {pyo.summary['jobs']} jobs")
    print(f"fifo (Rust)            {t_rust:7.2f} s")
    print(
        f"py_fifo (Python pass)  {t_py:7.2f} s  {py.passes} passes, {py.jobs_seen / max(py.passes, 1):.1f} queued jobs per pass"
        f"  same starts as fifo: {same}"
    )
    print(f"  {(t_py - t_rust) / max(py.passes, 1) * 1e6:.1f} us per pass over fifo,"
          f" {(t_py - t_rust) / max(py.jobs_seen, 1) * 1e6:.2f} us per queued job shown")

    env = SchedulingEnv(env_scenario, window=16)
    rng = random.Random(1)
    obs, _ = env.reset(seed=1)
    steps = 0
    t = time.perf_counter()
    while True:
        obs, r, term, trunc, info = env.step(rng.choice(np.flatnonzero(obs["mask"]).tolist()))
        steps += 1
        if term or trunc:
            break
    wall = time.perf_counter() - t
    print(f"SchedulingEnv on {env_scenario}: {steps} steps in {wall:.3f} s, {wall / steps * 1e6:.1f} us per step"
          f" (random agent, window 16)")


if __name__ == "__main__":
    main()
