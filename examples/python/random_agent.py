"""One episode of gresim.env.SchedulingEnv with a random agent.

    python examples/python/random_agent.py [SCENARIO] [--seed S] [--reward wait|slowdown|utilization]

At each step the agent picks uniformly among the actions the mask allows
(a job in the window that fits now, or none). It prints the episode's
reward, the jobs it started and their mean wait (docs/python.md,
"Reinforcement learning").
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import numpy as np

from gresim.env import SchedulingEnv

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenario", nargs="?", default=str(REPO / "scenarios" / "mig_packing.json"))
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--reward", default="wait", choices=["wait", "slowdown", "utilization"])
    ap.add_argument("--window", type=int, default=16)
    args = ap.parse_args()

    env = SchedulingEnv(args.scenario, window=args.window, reward=args.reward)
    rng = random.Random(args.seed)
    obs, info = env.reset(seed=args.seed)
    total, started, steps = 0.0, 0, 0
    while True:
        action = rng.choice(np.flatnonzero(obs["mask"]).tolist())
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        steps += 1
        started += info["started"] is not None
        if terminated or truncated:
            break
    outcome = env.outcome()
    print(f"episode reward ({args.reward}): {total:.3f} over {steps} steps")
    print(f"jobs started: {started}")
    print(f"mean wait: {outcome.summary['wait']['mean']:.1f} s")


if __name__ == "__main__":
    main()
