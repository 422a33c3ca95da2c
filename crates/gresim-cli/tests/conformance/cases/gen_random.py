#!/usr/bin/env python3
"""Generate a seeded random scheduling case for slurm-peer's replay.py.

    gen_random.py --preset NAME --seed N --jobs 50 -o CASE.json

A preset fixes the cluster (nodes, GPU types, Cores=, Links, weights,
partitions, priority plugin); the seed fixes the job mix: submit times (whole
seconds, several jobs may share a second), typed/untyped --gres, --gpus,
--gpus-per-node multi-node jobs, --gpus-per-task with --ntasks-per-node,
CPU-only jobs, arrays (some throttled), MIG-slice requests where the cluster
has them, --cpus-per-task / --mem / --mem-per-gpu / --cpus-per-gpu, minute
time limits (one or two jobs overrun theirs -> TIMEOUT), afterok/afterany
dependencies on earlier jobs, --nice (multifactor presets), partitions, one
--exclusive job and one request that sbatch rejects.

Standard library only; the same preset + seed always gives the same file.
"""
import argparse
import json
import random


def islands8():
    return [[(2 if (i % 2 == j % 2 and i != j) else 0) for j in range(8)] for i in range(8)]


def pairs8():
    return [[0 if i == j else 2 if i // 2 == j // 2 else 1 if i // 4 == j // 4 else 0
             for j in range(8)] for i in range(8)]


PRESETS = {
    # public suite
    "pub_a": {
        "comment": "4 nodes: 2 x 8 a100 (per-socket Cores=), 1 x 8 h100 (NVLink islands), 1 MIG-style node 1g.10gb:7; priority/basic",
        "nodes": [
            {"name": "a[01-02]", "cpus": 64, "sockets": 2, "mem_mb": 512000,
             "gpus": [{"type": "a100", "count": 4, "cores": "0-31"}, {"type": "a100", "count": 4, "cores": "32-63"}]},
            {"name": "h01", "cpus": 64, "sockets": 2, "mem_mb": 1024000,
             "gpus": [{"type": "h100", "count": 8}], "gpu_links": islands8()},
            {"name": "m01", "cpus": 32, "sockets": 2, "mem_mb": 256000,
             "gpus": [{"type": "1g.10gb", "count": 7}]},
        ],
        "partitions": [{"name": "gpu", "nodes": "ALL", "default": True, "max_time": "INFINITE",
                        "extra": "DefaultTime=5"}],
        "slurm": {},
        "multifactor": False,
    },
    "pub_b": {
        "comment": "6 nodes: 3 x 4 l40s (Weight=1), 2 x 4 a100 (Weight=5), 1 CPU-only (Weight=1); partitions main (all, default) and fast (l40s + CPU, PriorityJobFactor=2, MaxTime=3); priority/multifactor (JobSize, Partition, nice)",
        "nodes": [
            {"name": "l[1-3]", "cpus": 32, "sockets": 2, "mem_mb": 192000, "weight": 1,
             "gpus": [{"type": "l40s", "count": 2, "cores": "0-15"}, {"type": "l40s", "count": 2, "cores": "16-31"}]},
            {"name": "a[1-2]", "cpus": 32, "sockets": 2, "mem_mb": 256000, "weight": 5,
             "gpus": [{"type": "a100", "count": 4}]},
            {"name": "c1", "cpus": 48, "sockets": 2, "mem_mb": 192000, "weight": 1},
        ],
        "partitions": [
            {"name": "main", "nodes": "ALL", "default": True, "max_time": "INFINITE",
             "extra": "PriorityJobFactor=1 DefaultTime=5"},
            {"name": "fast", "nodes": "l[1-3],c1", "max_time": "3",
             "extra": "PriorityJobFactor=2 DefaultTime=2"},
        ],
        "slurm": {"priority_type": "priority/multifactor",
                  "extra_conf": ["PriorityWeightJobSize=1000", "PriorityWeightPartition=2000",
                                 "PriorityWeightFairshare=0", "PriorityWeightQOS=0"]},
        "multifactor": True,
    },
    "my_c": {
        "comment": "5 nodes: 3 x 8 h100 (per-socket Cores=, NVLink pairs), 2 MIG-style nodes 3g.40gb:2+1g.10gb:3 (Weight=10); partitions batch (all, default, PriorityTier=1) and prio (h[1-2], PriorityTier=2, MaxTime=4); priority/basic",
        "nodes": [
            {"name": "h[1-3]", "cpus": 48, "sockets": 2, "mem_mb": 384000, "weight": 1,
             "gpus": [{"type": "h100", "count": 4, "cores": "0-23"}, {"type": "h100", "count": 4, "cores": "24-47"}],
             "gpu_links": pairs8()},
            {"name": "g[1-2]", "cpus": 32, "sockets": 2, "mem_mb": 256000, "weight": 10,
             "gpus": [{"type": "3g.40gb", "count": 2}, {"type": "1g.10gb", "count": 3}]},
        ],
        "partitions": [
            {"name": "batch", "nodes": "ALL", "default": True, "max_time": "INFINITE",
             "extra": "PriorityTier=1 DefaultTime=5"},
            {"name": "prio", "nodes": "h[1-2]", "max_time": "4",
             "extra": "PriorityTier=2 DefaultTime=2"},
        ],
        "slurm": {},
        "multifactor": False,
    },
    "my_d": {
        "comment": "8 nodes: 6 x 4 t4 (1 socket, 16 cores), 2 x 2 a40 (Weight=3); priority/multifactor (Age, JobSize, nice)",
        "nodes": [
            {"name": "t[01-06]", "cpus": 16, "sockets": 1, "mem_mb": 64000, "weight": 1,
             "gpus": [{"type": "t4", "count": 4}]},
            {"name": "b[1-2]", "cpus": 32, "sockets": 2, "mem_mb": 128000, "weight": 3,
             "gpus": [{"type": "a40", "count": 1, "cores": "0-15"}, {"type": "a40", "count": 1, "cores": "16-31"}]},
        ],
        "partitions": [{"name": "gpu", "nodes": "ALL", "default": True, "max_time": "INFINITE",
                        "extra": "DefaultTime=5"}],
        "slurm": {"priority_type": "priority/multifactor",
                  "extra_conf": ["PriorityWeightAge=1000", "PriorityMaxAge=00:05:00", "PriorityWeightJobSize=500",
                                 "PriorityWeightFairshare=0", "PriorityWeightQOS=0", "PriorityWeightPartition=0"]},
        "multifactor": True,
    },
    # held out (issue 18): a cluster no fitted parameter has seen
    "held_e": {
        "comment": "4 nodes: 2 x 8 h200 (per-socket Cores=), 2 x 4 l40s (Weight=2); partitions gpu (all, default) and short (the l40s nodes, PriorityTier=2, MaxTime=2); priority/multifactor (JobSize, Partition)",
        "nodes": [
            {"name": "x[1-2]", "cpus": 64, "sockets": 2, "mem_mb": 1024000, "weight": 1,
             "gpus": [{"type": "h200", "count": 4, "cores": "0-31"}, {"type": "h200", "count": 4, "cores": "32-63"}]},
            {"name": "y[1-2]", "cpus": 32, "sockets": 1, "mem_mb": 256000, "weight": 2,
             "gpus": [{"type": "l40s", "count": 4}]},
        ],
        "partitions": [
            {"name": "gpu", "nodes": "ALL", "default": True, "max_time": "INFINITE",
             "extra": "DefaultTime=5"},
            {"name": "short", "nodes": "y[1-2]", "max_time": "2",
             "extra": "PriorityTier=2 PriorityJobFactor=2 DefaultTime=2"},
        ],
        "slurm": {"priority_type": "priority/multifactor",
                  "extra_conf": ["PriorityWeightJobSize=1000", "PriorityWeightPartition=1000",
                                 "PriorityWeightFairshare=0", "PriorityWeightQOS=0", "PriorityWeightAge=0"]},
        "multifactor": True,
    },
}


def expand(expr):
    """'l[1-3],c1' -> ['l1', 'l2', 'l3', 'c1'] (enough for the presets here)"""
    out, depth, cur, parts = [], 0, "", []
    for ch in expr:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for part in parts:
        if "[" not in part:
            out.append(part)
            continue
        pre, body = part.split("[", 1)
        body, post = body.split("]", 1)
        for rng in body.split(","):
            a, _, b = rng.partition("-")
            for i in range(int(a), int(b or a) + 1):
                out.append(f"{pre}{i:0{len(a)}d}{post}")
    return out


def node_types(preset, partition=None):
    """{type: {per_node, nodes}} for the GPU types on the nodes of a partition."""
    allowed = None
    if partition is not None:
        p = next(x for x in preset["partitions"] if x["name"] == partition)
        if p.get("nodes", "ALL") != "ALL":
            allowed = set(expand(p["nodes"]))
    out = {}
    for n in preset["nodes"]:
        names = [x for x in expand(n["name"]) if allowed is None or x in allowed]
        if not names:
            continue
        per = {}
        for g in n.get("gpus", []):
            per[g["type"]] = per.get(g["type"], 0) + g["count"]
        for t, c in per.items():
            e = out.setdefault(t, {"per_node": c, "nodes": 0})
            e["per_node"] = max(e["per_node"], c)
            e["nodes"] += len(names)
    return out


MIG = lambda t: "g." in t


def gen(preset_name, seed, njobs):
    P = PRESETS[preset_name]
    rng = random.Random(seed)
    all_types = node_types(P)
    all_full = [x for x in all_types if not MIG(x)]
    max_full = max(all_types[x]["per_node"] for x in all_full)
    parts = [p["name"] for p in P["partitions"]]
    jobs = []
    t = 0
    timeouts = set(rng.sample(range(3, 20), 2 if njobs >= 45 else 1))
    reject_at = rng.randrange(5, njobs - 5)
    excl_at = rng.randrange(5, njobs - 5)
    while excl_at == reject_at:
        excl_at = rng.randrange(5, njobs - 5)
    for i in range(njobs):
        jid = f"j{i + 1:02d}"
        t += rng.choice([0, 0, 1, 1, 1, 1, 2, 2, 3])
        j = {"id": jid, "submit": t}
        part = None
        if len(parts) > 1 and rng.random() < 0.3:
            part = rng.choice(parts[1:])
        types = node_types(P, part)
        full = [x for x in types if not MIG(x)]
        mig = [x for x in types if MIG(x)]
        kind = rng.choices(
            ["gres", "gpus", "multinode", "per_task", "cpu", "array", "mig"],
            weights=[44, 10, 8 if any(types[x]["nodes"] > 1 for x in full) else 0, 7, 8, 9,
                     14 if mig else 0])[0]
        if not full:
            kind = "cpu"
        typ = rng.choice(full) if full else None
        typed = rng.random() < 0.5
        pn = types[typ]["per_node"] if typ else 0
        k = rng.choice([c for c in (1, 1, 1, 2, 2, 2, 3, 4, 4, 8) if c <= pn] or [0])
        if kind == "gres":
            j["gres"] = f"gpu:{typ}:{k}" if typed else f"gpu:{k}"
        elif kind == "gpus":
            j["gpus"] = f"{typ}:{k}" if typed else k
        elif kind == "multinode":
            j["nodes"] = 2
            if types[typ]["nodes"] < 2:
                typ = next(x for x in full if types[x]["nodes"] > 1)
                pn = types[typ]["per_node"]
            j["gpus_per_node"] = rng.choice([c for c in (1, 2, 4) if c <= pn])
            if typed:
                j["gpus_per_node"] = f"{typ}:{j['gpus_per_node']}"
        elif kind == "per_task":
            j["nodes"] = rng.choice([1, 1, 2])
            j["ntasks_per_node"] = rng.choice([2, 2, 4] if pn >= 4 else [2])
            j["gpus_per_task"] = 1
        elif kind == "cpu":
            j["cpus_per_task"] = rng.choice([2, 4, 8, 16])
        elif kind == "array":
            n = rng.randint(3, 6)
            j["array"] = f"1-{n}" + (f"%{rng.randint(1, 3)}" if rng.random() < 0.5 else "")
            j["gres"] = f"gpu:{typ}:{rng.choice([1, 1, 2])}" if typed else f"gpu:{rng.choice([1, 2])}"
        elif kind == "mig":
            mt = rng.choice(mig)
            j["gres"] = f"gpu:{mt}:{rng.choice([c for c in (1, 1, 2) if c <= types[mt]['per_node']])}"
        if kind not in ("cpu",) and rng.random() < 0.3:
            j["cpus_per_task"] = rng.choice([2, 4, 8])
        r = rng.random()
        if r < 0.15:
            j["mem"] = rng.choice(["16G", "32G", "64G"])
        elif r < 0.22 and kind in ("gres", "gpus"):
            j["mem_per_gpu"] = rng.choice(["20G", "40G"])
        elif r < 0.27 and kind == "gpus" and "cpus_per_task" not in j:
            j["cpus_per_gpu"] = rng.choice([2, 4])
        dur = rng.randint(3, 15)
        if kind == "array" and rng.random() < 0.5:
            dur = {"default": dur, str(rng.randint(1, 3)): rng.randint(3, 15)}
        j["duration"] = dur
        j["time_limit"] = rng.choice([1, 1, 1, 2, 2, 3])
        if i in timeouts:
            # overruns its 1-minute limit: small, single node, no array
            j = {"id": jid, "submit": t, "duration": 150, "time_limit": 1,
                 "gres": f"gpu:{typ}:1" if (typed and typ) else "gpu:1",
                 "comment": "overruns its limit -> TIMEOUT"}
        if part is not None:
            p = part
            j["partition"] = p
            mt = next(x for x in P["partitions"] if x["name"] == p)["max_time"]
            if mt != "INFINITE":
                j["time_limit"] = min(j["time_limit"], int(mt))
        if P["multifactor"] and rng.random() < 0.2:
            j["nice"] = rng.choice([50, 200, 1000])
        if i > 3 and rng.random() < 0.1 and i not in timeouts:
            cands = [d for d in jobs[max(0, i - 8):i] if "rejected" not in d.get("comment", "")]
            dep = rng.choice(cands)
            if dep.get("duration") == 150:
                # the parent will be killed at its limit: afterok would never be satisfied
                j["dependency"] = f"afternotok:{dep['id']}"
            else:
                j["dependency"] = f"{rng.choice(['afterok', 'afterok', 'afterany'])}:{dep['id']}"
        if i == excl_at:
            j = {"id": jid, "submit": t, "duration": rng.randint(4, 10), "gres": "gpu:1",
                 "exclusive": True, "time_limit": 1}
        if i == reject_at:
            j = {"id": jid, "submit": t, "duration": 5, "time_limit": 1,
                 "gres": rng.choice([f"gpu:{all_full[0]}:{max_full * 2}", "gpu:v100:1", f"gpu:{max_full + 1}"]),
                 "comment": "rejected at submission"}
        jobs.append(j)
    case = {"name": None, "comment": None,
            "nodes": P["nodes"], "partitions": P["partitions"]}
    if P["slurm"]:
        case["slurm"] = P["slurm"]
    case["jobs"] = jobs
    return case


def dumps(case):
    out = ["{"]
    keys = list(case.keys())
    for i, k in enumerate(keys):
        v = case[k]
        comma = "," if i < len(keys) - 1 else ""
        if isinstance(v, list) and k in ("nodes", "partitions", "actions", "jobs"):
            out.append(f' "{k}": [')
            for j, item in enumerate(v):
                out.append("  " + json.dumps(item) + ("," if j < len(v) - 1 else ""))
            out.append(" ]" + comma)
        else:
            out.append(f' "{k}": ' + json.dumps(v) + comma)
    out.append("}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", required=True, choices=sorted(PRESETS))
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--jobs", type=int, default=50)
    ap.add_argument("--name")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    case = gen(a.preset, a.seed, a.jobs)
    name = a.name or f"random_{a.preset}_{a.seed}"
    case["name"] = name
    case["comment"] = (f"Randomized mix generated by gen_random.py --preset {a.preset} --seed {a.seed} "
                       f"--jobs {a.jobs}. Cluster: {PRESETS[a.preset]['comment']}.")
    s = dumps(case)
    json.loads(s)
    with open(a.output, "w") as fh:
        fh.write(s)
    gpu_s = 0
    for j in case["jobs"]:
        d = j["duration"] if isinstance(j["duration"], int) else j["duration"]["default"]
        print_k = 1
        for key in ("gres", "gpus"):
            if key in j:
                print_k = int(str(j[key]).split(":")[-1])
        if "gpus_per_node" in j:
            print_k = int(str(j["gpus_per_node"]).split(":")[-1]) * j.get("nodes", 1)
        if "gpus_per_task" in j:
            print_k = j.get("nodes", 1) * j["ntasks_per_node"]
        n = 1
        if "array" in j:
            n = len(range(1, int(j["array"].split("-")[1].split("%")[0]) + 1))
        gpu_s += d * print_k * n
    print(f"{a.output}: {len(case['jobs'])} jobs, last submit {case['jobs'][-1]['submit']} s, "
          f"~{gpu_s} GPU-s of work")


if __name__ == "__main__":
    main()
