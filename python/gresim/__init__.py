"""gresim: a fast, faithful discrete-event simulator of Slurm GPU clusters.

``gresim.run(scenario)`` runs a scenario (a path, a dict or a
:class:`Scenario` from :func:`load`) through the library's entry point, the
same one ``sim run`` uses, and returns an :class:`Outcome`. See
docs/python.md.
"""

from __future__ import annotations

import json
import os
from typing import Any

from . import _gresim
from ._errors import GresimError, PolicyError, ScenarioError, SimulationError, UsageError

__all__ = [
    "GresimError",
    "Outcome",
    "PassView",
    "PlacementQuery",
    "QueuedJob",
    "PolicyError",
    "Scenario",
    "ScenarioError",
    "SimulationError",
    "UsageError",
    "compare",
    "fgd",
    "load",
    "pass_policy",
    "policies",
    "run",
    "sweep",
]

Scenario = _gresim.Scenario
PlacementQuery = _gresim.PlacementQuery
PassView = _gresim.PassView
QueuedJob = _gresim.QueuedJob


def load(scenario) -> Scenario:
    """Reads and checks a scenario (a path or a dict) once, to run it many times."""
    return _gresim.load(scenario)


def policies() -> list[str]:
    """The names of gresim's own policies (``--policy``)."""
    return list(_gresim.policies())


def _pandas():
    try:
        import pandas  # noqa: F401
    except ImportError:
        return None
    return pandas


class Outcome:
    """One run's results.

    - ``summary``: ``summary.json`` as a dict;
    - ``records``: one record per job (``records.json``), a pandas DataFrame
      when pandas is installed, else a list of dicts;
    - ``utilization``: the load timeline, a sample at every change (columns
      ``t``, ``gpus_allocated``, ``gpus_available``,
      ``gpu_sevenths_allocated``, ``cpus_allocated``, ``running``,
      ``pending``), a DataFrame with pandas, else a dict of lists;
    - ``write(dir)``: the files ``sim run --out DIR`` writes, byte for byte.
    """

    def __init__(self, native: _gresim.Outcome):
        self._native = native
        self._summary = None
        self._records = None

    @property
    def policy(self) -> str:
        return self._native.policy

    @property
    def scenario(self) -> str:
        return self._native.scenario

    @property
    def seed(self) -> int:
        return self._native.seed

    @property
    def summary(self) -> dict:
        if self._summary is None:
            self._summary = json.loads(self._native.summary_json())
        return self._summary

    def record_list(self) -> list[dict]:
        """The records as a list of dicts, with or without pandas."""
        if self._records is None:
            self._records = json.loads(self._native.records_json())
        return self._records

    @property
    def records(self):
        recs = self.record_list()
        pd = _pandas()
        return pd.DataFrame(recs) if pd is not None else recs

    @property
    def utilization(self):
        cols = self._native.utilization()
        pd = _pandas()
        return pd.DataFrame(cols) if pd is not None else cols

    def table(self) -> str:
        """The summary as ``sim run`` prints it."""
        return self._native.table()

    def write(self, dir: str | os.PathLike) -> None:
        """Writes records.json, records.csv, summary.json, utilization.svg and
        run.json into ``dir`` (created if needed), atomically."""
        self._native.write(os.fspath(dir))

    def __repr__(self) -> str:
        return repr(self._native).replace("Outcome(", "gresim.Outcome(", 1)


def policy_name(policy) -> str:
    """A Python policy's name in reports: its ``name`` attribute, else its
    function's or class's name."""
    name = getattr(policy, "name", None)
    if isinstance(name, str) and name:
        return name
    return getattr(policy, "__name__", None) or type(policy).__name__


class _PassPolicy:
    """A function ``f(view)`` marked as a whole-pass policy (:func:`pass_policy`)."""

    def __init__(self, f, name=None):
        self.schedule = f
        self.name = name or getattr(f, "__name__", None) or type(f).__name__

    def __repr__(self) -> str:
        return f"gresim.pass_policy({self.name})"


def pass_policy(f=None, *, name=None):
    """Marks ``f(view)`` as a whole-pass policy for :func:`run` (also as a
    decorator, ``@gresim.pass_policy``). An object with a ``schedule(view)``
    method is one already."""
    if f is None:
        return lambda g: _PassPolicy(g, name)
    return _PassPolicy(f, name)


def _locate(err: PolicyError, f) -> None:
    """A refused decision has no traceback of its own: name where the
    policy that made it is defined (``source``, also added to the message)."""
    if err.traceback is not None:
        return
    import inspect

    code = getattr(inspect.unwrap(f), "__code__", None)
    if code is None:
        return
    err.source = f"{code.co_filename}:{code.co_firstlineno}"
    err.message += f"\n  the decision was made by {code.co_name} ({err.source})"


def _placement_function(policy):
    place = getattr(policy, "place", None)
    if callable(place):
        return place
    if callable(policy):
        return policy
    raise TypeError(
        "policy: expected a policy name, a placement function or an object with a "
        f"place(query) method, got {type(policy).__name__}"
    )


def run(
    scenario, policy: Any = None, seed: int | None = None, out=None, reasons: bool | None = None
) -> Outcome:
    """Runs ``scenario`` (a path, a dict or a :class:`Scenario`).

    ``policy``: a gresim policy's name (``"slurm"``, ``"best-fit"``, …; see
    :func:`policies`); None runs the scenario's own. Or a placement policy
    written in Python: a function ``f(query)`` or an object with a
    ``place(query)`` method, given a :class:`PlacementQuery` for each job
    that fits now, returning None (Slurm's choice), ``[]`` (the job waits)
    or ``[(node, [gpu, ...]), ...]``; Slurm's queue, main pass and backfill
    stay around it (docs/python.md). Or a whole-pass policy: an object
    with a ``schedule(view)`` method, or a function wrapped by
    :func:`pass_policy`, called at each main pass with a :class:`PassView`
    and returning None or a dict with ``start``, ``order`` and ``reasons``
    (docs/python.md, "Whole-pass policies"). A policy that raises, or
    returns a decision the engine refuses, stops the run with
    :class:`PolicyError`. ``seed``: None runs
    the scenario's own. ``out``: a directory to write the outputs into, as
    ``sim run --out`` does. ``reasons``: keep every pending-reason change
    for the views in run.json (None: as ``sim run``, for workloads of up to
    200,000 submissions known before the run). Raises
    :class:`ScenarioError` on bad input.
    """
    if policy is None or isinstance(policy, str):
        native = _gresim.run_builtin(scenario, policy, seed, reasons)
    else:
        schedule = getattr(policy, "schedule", None)
        f = schedule if callable(schedule) else _placement_function(policy)
        run_native = _gresim.run_pass_policy if callable(schedule) else _gresim.run_placement
        try:
            native = run_native(scenario, f, policy_name(policy), seed, reasons)
        except PolicyError as e:
            _locate(e, f)
            raise
    outcome = Outcome(native)
    if out is not None:
        outcome.write(out)
    return outcome


def _table(rows: list[dict]):
    pd = _pandas()
    return pd.DataFrame(rows) if pd is not None else rows


class _Rows:
    """Rows of a results table: ``rows`` (a DataFrame with pandas, else a
    list of dicts), ``row_list()`` (always the list) and ``table()`` (what
    ``sim`` prints)."""

    def __init__(self, rows_json, table):
        self._rows = json.loads(rows_json)
        self._table = table

    def row_list(self) -> list[dict]:
        return self._rows

    @property
    def rows(self):
        return _table(self._rows)

    def table(self) -> str:
        return self._table


class Comparison(_Rows):
    """``gresim.compare``'s result: ``outcomes`` (policy name -> :class:`Outcome`)
    and ``compare.json``'s rows."""

    def __init__(self, names, natives, rows_json, table):
        super().__init__(rows_json, table)
        self.outcomes = {n: Outcome(o) for n, o in zip(names, natives)}


DEFAULT_COMPARE = ["slurm", "first-fit", "best-fit", "spread", "topology-aware"]


def compare(scenario, policies=None, seed: int | None = None, out=None) -> Comparison:
    """The same seeded workload under several policies, in parallel, as
    ``sim compare`` runs it (default policies: ``sim compare``'s). With
    ``out``, writes what ``sim compare --out`` writes."""
    names = list(DEFAULT_COMPARE if policies is None else policies)
    natives, rows, table = _gresim.compare(
        scenario, names, seed, None if out is None else os.fspath(out)
    )
    return Comparison(names, natives, rows, table)


class SweepResult(_Rows):
    """``gresim.sweep``'s result: ``head`` (the results file's head: sweep,
    scenario, fingerprint, points, policies, parameters, seeds) and one row
    per point."""

    def __init__(self, head_json, rows_json, table):
        super().__init__(rows_json, table)
        self.head = json.loads(head_json)


def sweep(path, out=None, threads: int | None = None) -> SweepResult:
    """Runs every point of a sweep file (docs/scenario-format.md, "Sweeps")
    in parallel, as ``sim sweep`` does; with ``out``, writes what ``sim sweep
    --out`` writes (each point's outputs, results.json, results.csv). For
    shards on a cluster, use ``sim sweep --shard`` / ``--emit-sbatch``."""
    head, rows, table = _gresim.sweep(
        os.fspath(path), None if out is None else os.fspath(out), threads
    )
    return SweepResult(head, rows, table)


class FgdResult:
    """``gresim.fgd``'s result: ``runs`` (each run's figure per metric and
    arrival percentage) and ``summary`` (mean over seeds beside the published
    mean, every 10 %), each a DataFrame with pandas, else a list of dicts;
    ``runs_csv`` and ``summary_csv``, the files ``sim fgd --out`` writes;
    ``nodes``, ``gpus`` and ``tasks``, the size of the OpenB cluster and trace."""

    def __init__(self, runs_csv: str, summary_csv: str, size):
        self.runs_csv, self.summary_csv = runs_csv, summary_csv
        self.nodes, self.gpus, self.tasks = size

    @staticmethod
    def _parse(text: str) -> list[dict]:
        import csv
        import io

        rows = list(csv.DictReader(io.StringIO(text)))
        for r in rows:
            for k, v in r.items():
                if v == "":
                    r[k] = None
                elif k in ("seed", "arrived_gpu_request_pct", "n_seeds"):
                    r[k] = int(v)
                elif k not in ("workload", "sc_policy", "metric"):
                    r[k] = float(v)
        return rows

    def run_list(self) -> list[dict]:
        return self._parse(self.runs_csv)

    def summary_list(self) -> list[dict]:
        return self._parse(self.summary_csv)

    @property
    def runs(self):
        return _table(self.run_list())

    @property
    def summary(self):
        return _table(self.summary_list())

    def write(self, dir) -> None:
        """Writes ``fgd_runs.csv`` and ``fgd_summary.csv`` into ``dir``."""
        os.makedirs(dir, exist_ok=True)
        for name, text in (("fgd_runs.csv", self.runs_csv), ("fgd_summary.csv", self.summary_csv)):
            with open(os.path.join(dir, name), "w", encoding="utf-8", newline="") as f:
                f.write(text)


def fgd(data=None, workload: str = "default", seeds=None, policies=None, threads: int | None = None) -> FgdResult:
    """The FGD (ATC'23) reproduction on Alibaba's OpenB trace, as ``sim fgd``
    computes it: every seed (default 42..51) under every policy (default
    random, dotprod, clustering, packing, bestfit, fgd), in parallel. ``data``
    defaults to the repository's ``data/`` (OpenB's CSVs and the published
    figures, compressed); ``workload`` names ``openb_pod_list_<workload>.csv``."""
    runs, summary, size = _gresim.fgd(
        None if data is None else os.fspath(data),
        workload,
        None if seeds is None else [int(s) for s in seeds],
        None if policies is None else list(policies),
        threads,
    )
    return FgdResult(runs, summary, size)


from . import env  # noqa: E402  (gresim.env.SchedulingEnv; numpy is imported when an env is made)
