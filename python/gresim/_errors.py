"""The exceptions gresim raises. Each one's ``str()`` is the message ``sim``
prints after ``error:``, word for word."""

from __future__ import annotations


class GresimError(Exception):
    """Base class of gresim's exceptions."""

    def __init__(self, message: str, **fields):
        super().__init__(message)
        self.message = message
        for k, v in fields.items():
            setattr(self, k, v)

    def __str__(self) -> str:
        return self.message


class ScenarioError(GresimError, ValueError):
    """Bad input (``sim`` exits 2): a scenario, trace or sweep file.

    Attributes: ``file`` (the file, or ``<dict>`` for a scenario given as a
    dict), ``path`` (the JSON path, e.g. ``cluster.nodes[0].gpus``, or
    None), ``line`` and ``column`` (1-based, or None), ``detail`` (the
    message alone) and ``message`` (everything, as ``sim`` prints it).
    """

    def __init__(self, message: str, file=None, path=None, line=None, column=None, detail=None):
        super().__init__(
            message, file=file, path=path, line=line, column=column, detail=detail or message
        )


class UsageError(GresimError, ValueError):
    """A bad argument (an unknown policy name); ``argument`` names it."""

    def __init__(self, message: str, argument=None):
        super().__init__(message, argument=argument)


class PolicyError(GresimError, RuntimeError):
    """A Python policy failed: it raised, or returned a decision the engine
    refused (an unknown node or job, a GPU that is not free, a job that does
    not fit, a reason that is not a string). When the policy raised, its own
    exception is ``__cause__`` and ``traceback`` is its traceback as Python
    prints it (also at the end of the message); otherwise ``traceback`` is
    None, the message names the decision and why it was refused, and
    ``source`` (``file:line``, also at the end of the message) is where the
    policy function that made it is defined."""

    def __init__(self, message: str, job=None, traceback=None, source=None):
        super().__init__(message, job=job, traceback=traceback, source=source)


class SimulationError(GresimError, RuntimeError):
    """An internal error of the simulator (``sim`` exits 1): a bug."""

    def __init__(self, message: str):
        super().__init__(message)
