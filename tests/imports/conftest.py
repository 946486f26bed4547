"""Shared fixtures: the real samples beside the project (`../shared/samples/`), never copied in."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2].parent / "shared" / "samples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="session")
def sample() -> Callable[[str], Path]:
    """`sample("price_history/x.csv")`: a file of ../shared/samples/, or skip saying which is missing."""

    def find(relative: str) -> Path:
        path = SAMPLES / relative
        if not path.is_file():
            pytest.skip(
                f"real sample {relative} not found under {SAMPLES} (the shared samples are not there)"
            )
        return path

    return find


@pytest.fixture
def fixtures() -> Path:
    """This folder's own fixtures (synthetic where a README there says so)."""
    return FIXTURES
