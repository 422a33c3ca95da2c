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
    refused (an unknown node, a GPU that is not free, too few GPUs). The
    policy's own exception, with its traceback, is ``__cause__``."""

    def __init__(self, message: str, job=None):
        super().__init__(message, job=job)


class SimulationError(GresimError, RuntimeError):
    """An internal error of the simulator (``sim`` exits 1): a bug."""

    def __init__(self, message: str):
        super().__init__(message)
