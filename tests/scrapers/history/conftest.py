"""Fixtures for the public-tracker readers: this folder's own (synthetic) files; real samples via `sample`."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    """This folder's own fixtures (synthetic where a README there says so)."""
    return FIXTURES
