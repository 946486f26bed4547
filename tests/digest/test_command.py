"""`gpuplan digest` end to end: a real writer/published warehouse pair and a real SMTP server."""

from __future__ import annotations

from datetime import date

import pytest
from synthetic_warehouse import SyntheticWarehouse
from typer.testing import CliRunner

from gpuplan.cli import app
from warehouse import connect

DAY = date(2026, 12, 1)


@pytest.fixture
def env(settings, smtp_server):
    """The environment `gpuplan` builds its Settings from, with a published warehouse holding plans."""
    with connect.writer(settings.warehouse) as con:
        warehouse = SyntheticWarehouse(con)
        warehouse.plans(DAY, [warehouse.plan("7B", "lora", "矩池云", "A100 80GB", 1, 800.0)])
    return {
        "GPUPLAN_WAREHOUSE": str(settings.warehouse),
        "GPUPLAN_SMTP_HOST": "127.0.0.1",
        "GPUPLAN_SMTP_PORT": str(smtp_server.port),
        "GPUPLAN_SMTP_SECURITY": "none",
        "GPUPLAN_SMTP_FROM": settings.smtp.sender,
        "GPUPLAN_SMTP_TO": ",".join(settings.smtp.recipients),
    }


def test_preview_writes_the_html_and_sends_nothing(env, tmp_path, smtp_server):
    out = tmp_path / "digest.html"
    result = CliRunner().invoke(app, ["digest", "--date", "2026-12-01", "--preview", str(out)], env=env)
    assert result.exit_code == 0, result.output
    assert "gpuplan 2026-12-01: no changes" in result.output
    assert "矩池云" in out.read_text(encoding="utf-8")
    assert smtp_server.handler.envelopes == []


def test_send_mails_once_per_day(env, smtp_server):
    runner = CliRunner()
    first = runner.invoke(app, ["digest", "--date", "2026-12-01", "--send"], env=env)
    second = runner.invoke(app, ["digest", "--date", "2026-12-01", "--send"], env=env)
    assert first.exit_code == 0, first.output
    assert "2026-12-01: sent to ops@gpuplan.test, lead@gpuplan.test" in first.output
    assert second.exit_code == 0 and "2026-12-01: already sent, not sent again" in second.output
    assert len(smtp_server.handler.envelopes) == 1


def test_a_failed_send_exits_non_zero(env, smtp_server):
    smtp_server.stop()
    result = CliRunner().invoke(app, ["digest", "--date", "2026-12-01", "--send"], env=env)
    assert result.exit_code == 1
    assert "2026-12-01: failed: ConnectionRefusedError" in result.output


USER_ERRORS = {
    "neither --preview nor --send": (["digest"], "exactly one of --preview FILE.html or --send"),
    "a bad date": (["digest", "--date", "1.12.2026", "--send"], "Invalid value for '--date'"),
    "a day without plans": (
        ["digest", "--date", "2026-11-01", "--preview", "x.html"],
        "no cheapest plans for 2026-11-01",
    ),
}


@pytest.mark.parametrize("args, message", USER_ERRORS.values(), ids=USER_ERRORS.keys())
def test_user_errors_are_one_clear_line(env, args, message):
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output
