"""Fixtures of the reliability suite: the fault days, built once per test run (fault_days.py)."""

from __future__ import annotations

import pickle
import time

import pytest

from config.locks import flock_by
from reliability.fake_secrets import secret_env
from reliability.fault_days import FaultMatrix, build_matrix

# How long a worker waits for another to build the fault days: the build takes about a minute
# alone on two cores; past this, something is stuck.
BUILD_WAIT_S = 900.0


@pytest.fixture(scope="session")
def fault_matrix(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> FaultMatrix:
    """Every crawl fault on its platforms, day after day, loaded and planned, with fake secrets set.

    Built once per test run, not once per xdist worker (a session fixture is per worker): the first
    worker to need it builds it under a lock in the run's shared temporary folder, the others read
    what it built (pytest-xdist's recipe for a session fixture run once). Grouping the tests onto
    one worker (`--dist loadgroup`) would do instead, but pytest 9.2 drops xdist 3.8's groups
    silently (pytest-dev/pytest-xdist#1386)."""
    if worker_id == "master":
        return build_matrix(tmp_path_factory.mktemp("fault-days"), secret_env())
    shared = tmp_path_factory.getbasetemp().parent
    with (shared / "fault-days.lock").open("w") as lock:
        assert flock_by(lock.fileno(), time.monotonic() + BUILD_WAIT_S), "another worker's build is stuck"
        built = shared / "fault-days.pickle"
        if built.is_file():
            return pickle.loads(built.read_bytes())
        matrix = build_matrix(tmp_path_factory.mktemp("fault-days"), secret_env())
        built.write_bytes(pickle.dumps(matrix))
        return matrix
