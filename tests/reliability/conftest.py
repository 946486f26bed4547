"""Fixtures of the reliability suite: the fault days, built once per session (fault_days.py)."""

from __future__ import annotations

import pytest

from reliability.fake_secrets import secret_env
from reliability.fault_days import FaultMatrix, build_matrix


@pytest.fixture(scope="session")
def fault_matrix(tmp_path_factory: pytest.TempPathFactory) -> FaultMatrix:
    """Every crawl fault on its platforms, day after day, loaded and planned, with fake secrets set."""
    return build_matrix(tmp_path_factory.mktemp("fault-days"), secret_env())
