"""Fixtures shared by the sizing tests."""

from __future__ import annotations

import pytest
import typer

from gpuplan.commands import size


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    """An app holding only the size command, as gpuplan.cli registers it."""
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """Only the size command, as gpuplan.cli registers it."""

    size.register(app)
    return app
