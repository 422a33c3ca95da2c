"""Shared fixtures of the Python tests, and the skip marker `.ci/run` lists.

A skipped test prints `GRESIM-SKIP: python/tests/<file>::<test>: <reason>`
on stderr, as the Rust tests do (gresim_test_support::skip!): `.ci/run` collects
the line, lists every skip at the end and, with CI=true, fails the run on a
reason not on its allow-list. Nothing here skips on its own.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "scenarios"


def pytest_runtest_logreport(report):
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        sys.stderr.write(f"GRESIM-SKIP: python/{report.nodeid}: {reason}\n")
        sys.stderr.flush()


def _target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))


@pytest.fixture(scope="session")
def sim_bin() -> Path:
    """The `sim` binary: $GRESIM_SIM (.ci/run sets it), else one cargo built
    in the target directory, else `cargo build --bin sim` builds it."""
    given = os.environ.get("GRESIM_SIM")
    if given:
        p = Path(given)
        assert p.is_file(), f"GRESIM_SIM={given} is no file"
        return p
    for profile in ("release", "debug"):
        p = _target_dir() / profile / "sim"
        if p.is_file():
            return p
    cargo = shutil.which("cargo")
    assert cargo, "no sim binary and no cargo to build one: set GRESIM_SIM"
    subprocess.run([cargo, "build", "--bin", "sim"], cwd=REPO, check=True)
    return _target_dir() / "debug" / "sim"


def run_sim(sim_bin: Path, *args, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("RUST_BACKTRACE", None)
    return subprocess.run(
        [str(sim_bin), *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env
    )
