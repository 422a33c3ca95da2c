"""slurm, best-fit and a placement policy written in Python on the MIG
showcase, side by side, and their wait-time CDFs.

    pip install ./python matplotlib
    python examples/python/compare_policies.py [--scenario PATH] [--out waits.png] [--seed N]

The default scenario is the MIG showcase, where the three place single
slices and whole GPUs alike; `--scenario scenarios/topology_4node.json`
shows placements that change waits (docs/python.md).

Needs matplotlib (docs/python.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import gresim  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SCENARIO = REPO / "scenarios" / "mig_packing.json"


def py_best_fit(q):
    """Single-node GPU jobs on the candidate with the fewest free GPUs of
    their type, then the fewest free CPUs; the rest as Slurm places them."""
    need = q.gpus_per_node
    if q.min_nodes != 1 or need == 0:
        return None
    fits = [(f, c, n) for n, f, c in zip(q.candidates, q.free_gpu_counts, q.free_cpus) if f >= need]
    if not fits:
        return None
    _, _, node = min(fits)
    return [(node, q.free_gpus(node)[:need])]


def cdf(values):
    xs = sorted(values)
    n = len(xs)
    return xs, [(i + 1) / n for i in range(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default=str(SCENARIO), help="the scenario (default: scenarios/mig_packing.json)")
    ap.add_argument("--out", default="waits.png", help="where to write the plot (PNG)")
    ap.add_argument("--seed", type=int, default=None, help="the workload's seed (default: the scenario's)")
    args = ap.parse_args()

    scenario = gresim.load(args.scenario)
    runs = {
        "slurm": gresim.run(scenario, policy="slurm", seed=args.seed),
        "best-fit": gresim.run(scenario, policy="best-fit", seed=args.seed),
        "py_best_fit (Python)": gresim.run(scenario, policy=py_best_fit, seed=args.seed),
    }
    print(f"{'policy':<22} {'wait mean':>10} {'wait p95':>9} {'GPU util':>9}")
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, o in runs.items():
        s = o.summary
        print(f"{name:<22} {s['wait']['mean']:>10.1f} {s['wait']['p95']:>9.0f} {s['gpu_utilization']:>9.3f}")
        waits = [r["wait"] for r in o.record_list() if r["wait"] is not None]
        xs, ys = cdf(waits)
        ax.step(xs, ys, where="post", label=name)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlabel("wait (s)")
    ax.set_ylabel("share of jobs")
    ax.set_title(f"{scenario.name}: wait CDF")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
