"""`gpuplan digest` end to end: a real writer/published warehouse pair and a real SMTP server."""

from __future__ import annotations

import json
from datetime import date

import pytest
from synthetic_warehouse import SyntheticWarehouse
from typer.testing import CliRunner
from warehouse_template import migrated, published_copy

from gpuplan.cli import app
from warehouse.engine import connect

DAY = date(2026, 12, 1)


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """A published warehouse holding the day's plans, made once for the module."""
    warehouse = tmp_path_factory.mktemp("planned") / "warehouse.duckdb"
    with connect.writer(migrated(warehouse)) as con:
        synthetic = SyntheticWarehouse(con)
        synthetic.plans(DAY, [synthetic.plan("7B", "lora", "矩池云", "A100 80GB", 1, 800.0)])
    return warehouse


@pytest.fixture
def env(settings, smtp_server, planned):
    """The environment `gpuplan` builds its Settings from, with a published warehouse holding plans
    (a copy of the module's, of the test's own)."""
    published_copy(settings.warehouse, planned)
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
    "neither --preview, --json nor --send": (
        ["digest"],
        "exactly one of --preview FILE.html, --json or --send",
    ),
    "two of them": (["digest", "--json", "--send"], "exactly one of --preview FILE.html, --json or --send"),
    "an unknown language": (["digest", "--json", "--lang", "fr"], "GPUPLAN_DIGEST_LANG takes en or zh"),
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


JSON_KEYS = {
    "date",
    "previous_date",
    "lang",
    "summary",
    "price_move_pct",
    "watches",
    "watch_error",
    "plan_changes",
    "change_causes",
    "price_moves",
    "stock_changes",
    "failed_crawls",
    "excluded_offers",
    "check_warnings",
    "plans",
}


def test_json_prints_the_content_as_one_object(env, smtp_server):
    result = CliRunner().invoke(app, ["digest", "--date", "2026-12-01", "--json"], env=env)
    assert result.exit_code == 0, result.output
    content = json.loads(result.output)
    assert set(content) == JSON_KEYS
    assert (content["date"], content["lang"], content["summary"]) == ("2026-12-01", "en", "no changes")
    assert [(p["platform"], p["rent_usd_per_month"]) for p in content["plans"]] == [("矩池云", 800.0)]
    assert content["plan_changes"] == content["price_moves"] == content["watches"] == []
    assert smtp_server.handler.envelopes == []


@pytest.mark.parametrize("how", ["option", "environment"])
def test_the_language_comes_from_the_option_or_the_setting(env, tmp_path, how):
    out = tmp_path / "digest.html"
    args = ["digest", "--date", "2026-12-01", "--preview", str(out)]
    if how == "option":
        args += ["--lang", "zh"]
    else:
        env = {**env, "GPUPLAN_DIGEST_LANG": "zh"}
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    assert "gpuplan 2026-12-01：无变化" in result.output
    page = out.read_text(encoding="utf-8")
    assert '<html lang="zh">' in page and "训练一个月租金最低" in page and "每月 ¥5,760" in page


def test_a_bad_watches_file_stops_a_preview_with_its_line(env, tmp_path):
    watches = tmp_path / "watches.yaml"
    watches.write_text("- gpu: H100\n  below_usd_per_gpu_hour: cheap\n", encoding="utf-8")
    result = CliRunner().invoke(
        app, ["digest", "--date", "2026-12-01", "--json"], env={**env, "GPUPLAN_WATCHES": str(watches)}
    )
    assert result.exit_code != 0
    assert "line 2: below_usd_per_gpu_hour must be a positive number, not 'cheap'" in result.output
    assert "Traceback" not in result.output


def test_a_bad_watches_file_is_a_line_in_the_mail_not_a_lost_mail(env, tmp_path, smtp_server):
    watches = tmp_path / "watches.yaml"
    watches.write_text("- gpu: Z9000\n  min_available_gpus: 1\n", encoding="utf-8")
    result = CliRunner().invoke(
        app, ["digest", "--date", "2026-12-01", "--send"], env={**env, "GPUPLAN_WATCHES": str(watches)}
    )
    assert result.exit_code == 0, result.output
    assert "unknown GPU 'Z9000'" in result.output  # said on stderr too
    [message] = smtp_server.handler.messages
    text = message.get_body(("plain",)).get_content()
    assert "Watches not read: GPUPLAN_WATCHES" in text and "line 1: unknown GPU 'Z9000'" in text


def test_watches_resolve_gpu_names_as_people_write_them(env, tmp_path):
    """The CLI wires the real rule (sizing.gpu_names.resolve): "4090" is the RTX 4090 24GB card."""
    watches = tmp_path / "watches.yaml"
    watches.write_text("- gpu: '4090'\n  below_usd_per_gpu_hour: 5\n", encoding="utf-8")
    result = CliRunner().invoke(
        app, ["digest", "--date", "2026-12-01", "--json"], env={**env, "GPUPLAN_WATCHES": str(watches)}
    )
    assert result.exit_code == 0, result.output
    [watch] = json.loads(result.output)["watches"]
    assert (watch["kind"], watch["gpu"], watch["gpu_model"], watch["line"]) == (
        "price",
        "4090",
        "RTX 4090 24GB",
        1,
    )
