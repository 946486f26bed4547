"""Fixtures for the scrapers tests (helpers live in crawl_helpers.py, harnesses beside it)."""

from __future__ import annotations

import pytest
from crawl_helpers import TOKEN_VARIABLES


@pytest.fixture(autouse=True)
def _no_real_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process spiders read tokens from the environment: tests start without any."""
    for name in TOKEN_VARIABLES:
        monkeypatch.delenv(name, raising=False)
