#!/usr/bin/env python3
# Source: the project's peer kit, ../shared/bench/run_accasim.py (copied unchanged
# below this note, so that bench-peers works on a clone without ../shared).
"""Run AccaSim 1.1.3 on an SWF workload with FIFO or EASY backfilling + FirstFit.

usage: run_accasim.py WORKLOAD.swf SYS_CONFIG.json {fifo,easy} [--sched-out]
Prints one machine-readable line: RESULT sim=accasim disp=... jobs=... sim_s=... wall_s=... jobs_per_s=...
"""
import argparse, os, sys, time, json, tempfile
t0 = time.perf_counter()
from accasim.base.simulator_class import Simulator
from accasim.base.scheduler_class import FirstInFirstOut, EASYBackfilling
from accasim.base.allocator_class import FirstFit

ap = argparse.ArgumentParser()
ap.add_argument('workload'); ap.add_argument('sys_config'); ap.add_argument('disp', choices=['fifo', 'easy'])
ap.add_argument('--sched-out', action='store_true', help='also write the dispatching plan (I/O cost)')
ap.add_argument('--results', default=None)
a = ap.parse_args()
res = a.results or tempfile.mkdtemp(prefix='accasim-res-')
alloc = FirstFit()
disp = FirstInFirstOut(alloc) if a.disp == 'fifo' else EASYBackfilling(alloc)
sim = Simulator(a.workload, a.sys_config, disp, RESULTS_FOLDER_PATH=res,
                scheduling_output=a.sched_out, statistics_output=True, show_statistics=True,
                pprint_output=False, benchmark_output=False)
t1 = time.perf_counter()
sim.start_simulation(system_status=False)
t2 = time.perf_counter()
n = sim.loaded_jobs
simt = sim.end_simulation_time - sim.start_simulation_time
print('RESULT sim=accasim disp=%s jobs=%d dispatched=%d rejected=%d sim_loop_s=%.3f run_s=%.3f total_s=%.3f jobs_per_s=%.1f makespan=%s avg_wait=%.1f' % (
    a.disp, n, sim.dispatched_jobs, sim.rejected_jobs, simt, t2 - t1, t2 - t0, n / (t2 - t1),
    sim.mapper.last_run_time - sim.mapper.first_time_dispatch,
    sum(sim.mapper.wtimes) / max(1, len(sim.mapper.wtimes))), flush=True)
