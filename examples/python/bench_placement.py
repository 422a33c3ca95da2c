"""The cost of a Python placement decision (docs/performance.md).

    cargo run --release -p gresim-benches --example bench_run -- 100000 --json > bench.json
    python examples/python/bench_placement.py bench.json

Runs the scenario five ways, each timed on the wall clock: `slurm` and
`best-fit` in Rust, a Python placement that answers None (Slurm's own
choice: the same decisions as `slurm`, so the difference is the cost of
asking Python), and a best fit written in Python beside `best-fit`.
"""

from __future__ import annotations

import sys
import time

import gresim


def best_fit(q):
    need = q.gpus_per_node
    if q.min_nodes != 1 or need == 0:
        return None
    fits = [(f, c, n) for n, f, c in zip(q.candidates, q.free_gpu_counts, q.free_cpus) if f >= need]
    if not fits:
        return None
    _, _, node = min(fits)
    return [(node, q.free_gpus(node)[:need])]


class Counting:
    def __init__(self, f):
        self.f, self.calls = f, 0
        self.name = f.__name__

    def place(self, q):
        self.calls += 1
        return self.f(q)


def slurms(q):
    return None


def main():
    sc = gresim.load(sys.argv[1])
    print(f"scenario {sc.name}")
    base = {}
    for label, policy in [("slurm (Rust)", "slurm"), ("best-fit (Rust)", "best-fit"),
                          ("None (Python)", Counting(slurms)), ("best_fit (Python)", Counting(best_fit))]:
        t = time.perf_counter()
        o = gresim.run(sc, policy=policy, reasons=False)
        wall = time.perf_counter() - t
        calls = getattr(policy, "calls", 0)
        s = o.summary
        extra = ""
        if label.startswith("None"):
            extra = f"  same records as slurm: {o.record_list() == base['slurm'].record_list()}"
            extra += f"  {(wall - base['slurm_t']) / calls * 1e6:.1f} us per decision over slurm"
        if label == "slurm (Rust)":
            base["slurm"], base["slurm_t"] = o, wall
        print(f"{label:<18} {wall:7.2f} s  {calls:7d} calls  wait mean {s['wait']['mean']:9.1f}{extra}")


if __name__ == "__main__":
    main()
