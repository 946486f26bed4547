"""Fixtures of the reliability suite: the fault days, built once per session (fault_days.py)."""

from __future__ import annotations

import pytest

from reliability.fake_secrets import secret_env
from reliability.fault_days import FaultMatrix, build_matrix

# Every test of the fault days goes to one xdist worker (`--dist loadgroup`, pyproject.toml): a
# session fixture is built once per worker, and the days are the suite's longest build.
FAULT_DAYS_GROUP = pytest.mark.xdist_group("fault-days")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "fault_matrix" in getattr(item, "fixturenames", ()):
            item.add_marker(FAULT_DAYS_GROUP)


@pytest.fixture(scope="session")
def fault_matrix(tmp_path_factory: pytest.TempPathFactory) -> FaultMatrix:
    """Every crawl fault on its platforms, day after day, loaded and planned, with fake secrets set."""
    return build_matrix(tmp_path_factory.mktemp("fault-days"), secret_env())
