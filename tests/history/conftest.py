"""Fixtures for the history tests: the real samples beside the project, never copied in."""

from __future__ import annotations

from pathlib import Path

import pytest

LAMBDA_DAYS = ("2026-04-02", "2026-04-06", "2026-04-20", "2026-05-07")


@pytest.fixture(scope="session")
def lambda_catalogs(sample) -> list[Path]:
    """The four real SkyPilot Lambda catalogs of April-May 2026, oldest first."""
    return [sample(f"skypilot_catalog_format/lambda_vms_{day}.csv") for day in LAMBDA_DAYS]
