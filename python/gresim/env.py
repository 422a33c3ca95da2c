"""A Gymnasium-style environment over gresim: an agent starts pending jobs.

``SchedulingEnv(scenario)`` steps a gresim run main pass by main pass (the
engine stops before each pass that has jobs queued; docs/python.md,
"Reinforcement learning"). Gymnasium is not required: when it is installed
the class subclasses ``gymnasium.Env`` and has ``observation_space`` and
``action_space``; otherwise it has the same API, duck-typed:

- ``reset(seed=None, options=None) -> (obs, info)``;
- ``step(action) -> (obs, reward, terminated, truncated, info)``.

Observation (a dict of numpy arrays; ``W`` = ``window``, ``N`` = nodes):

- ``queue``: float32 ``[W, 9]``, one row per pending job in priority order
  (the first ``W``), zero rows after the last: ``present`` (1),
  ``wait`` (s since submit), ``nodes`` (least nodes), ``gpus`` (GPUs it
  takes at least: per node x nodes + per job), ``cpus`` (CPUs per task x
  tasks, one task per node when not given), ``time_limit`` (s, -1
  unlimited), ``priority``, ``fits`` (1 if cons_tres can start it now),
  ``gpu_type`` (0: any type; ``k > 0``: the type ``gpu_types[k - 1]``);
- ``nodes``: float32 ``[N, 8]``: ``free_gpus``, ``total_gpus`` (GRES
  indices: a MIG slice counts as one), ``free_cpus``, ``total_cpus``,
  ``available`` (1 unless DOWN or DRAINED), ``running_jobs``, ``next_end``
  and ``last_end`` (seconds until the earliest and the latest planned end
  of a job running there, -1 when none: start plus time limit, a year
  without one, as backfill plans; true run times stay hidden);
- ``mask``: int8 ``[W + 1]``: 1 for each slot whose job fits now, and 1 for
  the last entry (none).

Action: an int in ``0..W``: ``i < W`` starts the job in slot ``i`` now
(cons_tres picks its nodes and GPUs on the live state); ``W`` is none:
nothing more starts at this instant and time goes on to the next pass the
engine runs (a submission, a job's end, the periodic pass). After a start
the agent is asked again at the same instant. An empty slot or a job that
does not fit changes nothing and counts as none (``info["invalid"]``).

Rewards (``reward=``), between the observation before the step (time t0)
and after it (t1):

- ``wait``: ``-(W(t1) - W(t0)) / 3600``, where ``W(t)`` is the seconds
  every submitted job has waited by t (from first submission to first
  start, or to t): minus the job-hours of waiting during the step;
- ``slowdown``: minus the sum of bounded slowdowns
  ``max(1, (end - submit) / max(run, 10 s))`` of the jobs that ended in
  ``(t0, t1]``;
- ``utilization``: ``(B(t1) - B(t0)) / (G * 3600)``, where ``B(t)`` is the
  GPU-seconds allocated by t and ``G`` the cluster's GPUs (GRES indices):
  the cluster's busy fraction times the step's hours.

``terminated`` is True when the run is over (every job ended, or nothing
more can happen); ``truncated`` when ``max_steps`` steps were taken.
``reset(seed=s)`` runs the scenario's workload with seed ``s``; without a
seed, the first reset takes the scenario's seed and each later one the last
seed plus one. The same seed and the same actions give the same episode.
"""

from __future__ import annotations

from . import _gresim

try:  # Gymnasium is optional.
    import gymnasium as _gym
    from gymnasium import spaces as _spaces
except ImportError:  # pragma: no cover - depends on the environment
    _gym = None
    _spaces = None

QUEUE_FEATURES = ("present", "wait", "nodes", "gpus", "cpus", "time_limit", "priority", "fits", "gpu_type")
NODE_FEATURES = (
    "free_gpus",
    "total_gpus",
    "free_cpus",
    "total_cpus",
    "available",
    "running_jobs",
    "next_end",
    "last_end",
)
REWARDS = ("wait", "slowdown", "utilization")

_Base = _gym.Env if _gym is not None else object


def _np():
    import numpy

    return numpy


class SchedulingEnv(_Base):
    """An agent chooses which pending job starts; gresim simulates the rest.

    ``scenario``: a path, a dict or a :class:`gresim.Scenario`; ``window``:
    how many pending jobs the observation shows (and the agent may pick
    from); ``reward``: ``"wait"``, ``"slowdown"`` or ``"utilization"``;
    ``max_steps``: truncate an episode after this many steps (None: never).
    """

    metadata = {"render_modes": []}

    def __init__(self, scenario, window: int = 16, reward: str = "wait", max_steps: int | None = None):
        if not isinstance(window, int) or window < 1:
            raise ValueError(f"window: expected a positive int, got {window!r}")
        self._core = _gresim.EnvCore(scenario, window, reward)
        self.window = window
        self.reward_kind = reward
        self.max_steps = max_steps
        self._seed = None
        self._steps = 0
        self._total_reward = 0.0
        if _spaces is not None:
            np = _np()
            n = self._core.nodes
            self.observation_space = _spaces.Dict(
                {
                    "queue": _spaces.Box(-1.0, np.inf, (window, len(QUEUE_FEATURES)), np.float32),
                    "nodes": _spaces.Box(-1.0, np.inf, (n, len(NODE_FEATURES)), np.float32),
                    "mask": _spaces.Box(0, 1, (window + 1,), np.int8),
                }
            )
            self.action_space = _spaces.Discrete(window + 1)

    @property
    def none_action(self) -> int:
        """The action that starts nothing: ``window``."""
        return self.window

    @property
    def node_names(self) -> list[str]:
        return self._core.node_names

    @property
    def gpu_types(self) -> list[str]:
        """The cluster's GPU type names: the queue's ``gpu_type`` column
        ``k > 0`` is ``gpu_types[k - 1]``."""
        return self._core.gpu_types

    def _obs(self, raw):
        np = _np()
        q, n, mask = raw
        return {
            "queue": np.frombuffer(q, dtype="<f4").astype(np.float32).reshape(self.window, len(QUEUE_FEATURES)),
            "nodes": np.frombuffer(n, dtype="<f4").astype(np.float32).reshape(self._core.nodes, len(NODE_FEATURES)),
            "mask": np.frombuffer(mask, dtype=np.uint8).astype(np.int8),
        }

    def _info(self, **extra):
        info = {
            "time": self._core.time,
            "queued": self._core.queued,
            "window_jobs": self._core.window_jobs,
            "seed": self._seed,
        }
        info.update(extra)
        return info

    def reset(self, *, seed: int | None = None, options=None):
        if _gym is not None:
            super().reset(seed=seed)
        if seed is None:
            seed = self._core.scenario_seed if self._seed is None else self._seed + 1
        self._seed = int(seed)
        self._steps = 0
        self._total_reward = 0.0
        obs = self._obs(self._core.reset(self._seed))
        return obs, self._info()

    def step(self, action):
        if action is None:
            action = self.window
        try:
            a = int(action)
        except (TypeError, ValueError):
            raise ValueError(f"action: expected an int in 0..{self.window}, got {action!r}") from None
        if a < 0 or a > self.window:
            raise ValueError(f"action: expected an int in 0..{self.window}, got {a}")
        raw, reward, done, started, invalid = self._core.step(a)
        self._steps += 1
        self._total_reward += reward
        truncated = (not done) and self.max_steps is not None and self._steps >= self.max_steps
        info = self._info(started=started, invalid=invalid)
        return self._obs(raw), float(reward), bool(done), bool(truncated), info

    def outcome(self):
        """The episode's results as :func:`gresim.run` returns them (an
        :class:`gresim.Outcome`); the episode ends here."""
        from . import Outcome

        return Outcome(self._core.outcome())

    def close(self):
        pass
