"""The whole graph, materialized offline into a temporary warehouse, through `gpuplan refresh`.

Every crawl replays its spider's bundled snapshot in a child process, then the real loader,
sizing model and plan SQL run: this is the README's main command on a machine without network.
"""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd
import pytest
from typer.testing import CliRunner

from config.settings import Settings
from gpuplan.cli import app
from pipelines.assets.crawls import crawl_key
from pipelines.definitions import build_defs
from scrapers import registry
from warehouse import daily_plans, drift

pytestmark = pytest.mark.slow

DAY = "2026-11-30"
# Tables whose rows a re-run of the same day must leave as they were, with the columns that
# only record when a row was (re)computed.
STABLE_TABLES = {
    "crawl_runs": "loaded_at",
    "offers": None,
    "plan_crawls": "recorded_at",
    "plan_requirements": None,
    "plan_candidates": "computed_at",
    "cheapest_plans": "computed_at",
    "plan_changes": "computed_at",
    "fx_rates": None,
}


def _refresh(env: dict[str, str], *args: str):
    return CliRunner().invoke(
        app, ["refresh", "--offline", "--date", DAY, *args], env=env, catch_exceptions=False
    )


def _tables(path: Path) -> dict[str, pd.DataFrame]:
    with duckdb.connect(str(path), read_only=True) as con:
        return {
            table: con.execute(
                f"SELECT * {f'EXCLUDE ({stamp})' if stamp else ''} FROM {table} ORDER BY ALL"
            ).df()
            for table, stamp in STABLE_TABLES.items()
        }


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory) -> tuple[dict[str, str], Settings, str]:
    """One offline refresh of DAY into a fresh warehouse: (environment, settings, CLI output)."""
    root = tmp_path_factory.mktemp("refresh")
    env = {"GPUPLAN_WAREHOUSE": str(root / "warehouse.duckdb"), "GPUPLAN_CRAWL_DIR": str(root / "crawls")}
    result = _refresh({**env, "COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return env, Settings.from_env(env), result.output


def test_refresh_offline_plans_every_model_and_method(refreshed):
    _, settings, output = refreshed
    with duckdb.connect(str(settings.warehouse), read_only=True) as con:
        frame = daily_plans.plans_for_date(con)
        offers = con.execute(
            "SELECT o.platform, o.offer_id, o.gpu_model FROM offers o JOIN plan_crawls c USING (crawl_id) "
            "WHERE c.plan_date = $d",
            {"d": DAY},
        ).df()
    asked = {(m, x) for m in settings.models for x in settings.methods}
    assert pd.Timestamp(frame["plan_date"].iloc[0]).date().isoformat() == DAY
    assert set(zip(frame["model"], frame["method"], strict=True)) == asked
    assert len(frame) == 2 * len(asked)
    ok = frame[frame["status"] == "ok"]
    assert not ok.empty
    # every plan points at a real offer of the day, on the GPU it names
    on_offer = set(zip(offers["platform"], offers["offer_id"], offers["gpu_model"], strict=True))
    assert set(zip(ok["platform"], ok["offer_id"], ok["gpu_model"], strict=True)) <= on_offer
    # 7B QLoRA fits a single small card somewhere; the cheapest rent is at most the run plan's
    small = ok[(ok["model"] == "7B") & (ok["method"] == "qlora")].set_index("ranking")
    assert small.loc["lowest_rent", "gpu_count"] == 1
    assert small.loc["lowest_rent", "commitment_usd"] <= small.loc["lowest_run_total", "commitment_usd"]
    assert "Cheapest plans" in output and "7B" in output


def test_the_offline_demo_ranks_as_billed(refreshed):
    """For every model and method, the run plan is billed no more for one run of
    GPUPLAN_DEFAULT_TOKENS than the rent plan, and no plan that fits is billed less for it."""
    _, settings, output = refreshed
    with duckdb.connect(str(settings.warehouse), read_only=True) as con:
        frame = daily_plans.plans_for_date(con)
        least = con.execute(
            "SELECT model, method, min(total_usd) FROM plan_candidates WHERE plan_date = $d GROUP BY ALL",
            {"d": DAY},
        ).fetchall()
    by_ranking = frame.pivot(index=["model", "method"], columns="ranking", values="total_usd")
    fits = by_ranking.dropna()
    assert len(fits) == len(frame[frame["status"] == "ok"]) // 2 > 0
    assert (fits["lowest_run_total"] <= fits["lowest_rent"]).all(), fits
    for model, method, total_usd in least:
        assert by_ranking.loc[(model, method), "lowest_run_total"] == pytest.approx(total_usd)
    assert any(line.split()[2:3] == ["run"] for line in output.splitlines())


@pytest.mark.parametrize("model, method", [("7B", "full"), ("13B", "lora"), ("70B", "qlora")])
def test_the_run_plan_is_the_job_planners_best_for_that_run(refreshed, model, method):
    """The daily run plan is what `gpuplan plans --tokens` plans for a job of GPUPLAN_DEFAULT_TOKENS
    on the same day's crawls: the same offer, GPUs and total as billed."""
    env, settings, _ = refreshed
    daily = CliRunner().invoke(app, ["plans", "--model", model, "--method", method, "--json"], env=env)
    [run] = [r for r in json.loads(daily.output) if r["ranking"] == "lowest_run_total"]
    tokens = f"{settings.default_tokens:g}"
    job = CliRunner().invoke(
        app,
        ["plans", "--model", model, "--method", method, "--tokens", tokens, "--date", DAY, "--json"],
        env=env,
    )
    assert job.exit_code == 0, job.output
    best = json.loads(job.output)[0]
    assert (best["platform"], best["offer_id"], best["gpu_count"]) == (
        run["platform"],
        run["offer_id"],
        run["gpu_count"],
    )
    assert best["total_usd"] == pytest.approx(run["total_usd"])


def test_refresh_prints_the_plans_one_per_line_within_80_columns(refreshed):
    """The same fitted table as `gpuplan plans`: no row wrapped, the legend below."""
    _, settings, output = refreshed
    with duckdb.connect(str(settings.warehouse), read_only=True) as con:
        count = len(daily_plans.plans_for_date(con))
    lines = output.splitlines()
    title = lines.index(f"Cheapest plans, {DAY}")
    assert lines[title + 2].startswith("───")
    rows = lines[title + 3 : title + 3 + count]
    assert all("×" in row or "no offer fits" in row for row in rows), rows
    assert lines[title + 3 + count].startswith("by: ")
    hidden = next(i for i, line in enumerate(lines) if i > title and line.startswith("hidden at this width"))
    # The table and its legend fit; a note after them (the offers left out) is prose, one line each
    # off a terminal, so that a log keeps it whole.
    assert max(len(line.rstrip()) for line in lines[title : hidden + 1]) <= 80


def test_refresh_off_a_terminal_says_what_each_platform_did(refreshed):
    """Captured output is not a terminal: one plain line per platform, its status and offer count
    (the warehouse's record of the crawl), then the load, the plans and the digest."""
    _, settings, output = refreshed
    lines = output.splitlines()
    with duckdb.connect(str(settings.warehouse), read_only=True) as con:
        crawls = daily_plans.day_crawls(con, pd.Timestamp(DAY).date())
    assert sorted(crawls["platform"]) == registry.platforms()
    for row in crawls.itertuples():
        said = [line for line in lines if line.startswith(f"{row.platform}: ")]
        assert len(said) == 1, (row.platform, output)
        assert said[0].startswith(f"{row.platform}: {row.status}, {row.items_yielded} offers")
    load = next(line for line in lines if line.startswith("load: "))
    n = len(crawls)
    assert load == f"load: {int(crawls['offers_loaded'].sum())} offers from {n} of {n} platforms"
    assert any(line.startswith("plans: 24 (") for line in lines)
    assert any(line.startswith("digest: not sent (offline run)") for line in lines)


def test_plans_command_prints_the_published_plans_as_json(refreshed):
    env, _, _ = refreshed
    result = CliRunner().invoke(app, ["plans", "--model", "70B", "--method", "qlora", "--json"], env=env)
    assert result.exit_code == 0, result.output
    records = json.loads(result.output)
    assert {(r["model"], r["method"], r["plan_date"]) for r in records} == {("70B", "qlora", DAY)}
    assert {r["ranking"] for r in records} == {"lowest_rent", "lowest_run_total"}
    # each plan says its ranking's measure: what it ranks by
    for record in records:
        if record["status"] == "ok":
            assert record["measure_usd"] == record[record["measure"]]


def test_plans_command_says_when_there_is_nothing(refreshed):
    env, _, _ = refreshed
    result = CliRunner().invoke(app, ["plans", "--date", "2026-11-02"], env=env)
    assert result.exit_code == 1
    assert "no plans" in result.output


def test_refreshing_the_same_day_again_changes_nothing(refreshed):
    env, settings, _ = refreshed
    before = _tables(settings.warehouse)
    assert _refresh(env).exit_code == 0
    after = _tables(settings.warehouse)
    for table, frame in before.items():
        pd.testing.assert_frame_equal(after[table], frame, obj=table)


def test_refresh_rejects_an_unknown_platform(env):
    result = CliRunner().invoke(app, ["refresh", "--offline", "--platform", "nosuchcloud"], env=env)
    assert result.exit_code != 0
    assert "nosuchcloud" in result.output


def _bodies(folder: Path) -> list[Path]:
    snapshot = json.loads((folder / "snapshot.json").read_text("utf-8"))
    return [(folder / exchange["response"]["body_file"]).resolve() for exchange in snapshot["exchanges"]]


def test_a_broken_snapshot_fails_its_crawl_and_check_while_the_others_plan(settings, tmp_path, monkeypatch):
    # Break a platform whose recorded bodies live in its own folder (a copy); the others are linked.
    broken = next(
        p
        for p in registry.platforms()
        if all(b.parent == registry.FIXTURES / p for b in _bodies(registry.FIXTURES / p))
    )
    others = [platform for platform in registry.platforms() if platform != broken]
    fixtures = tmp_path / "fixtures"
    shutil.copytree(registry.FIXTURES / broken, fixtures / broken)
    for platform in others:
        (fixtures / platform).symlink_to(registry.FIXTURES / platform, target_is_directory=True)
    for body in _bodies(fixtures / broken):
        body.write_text("<html>we changed our site</html>")
    monkeypatch.setattr(registry, "FIXTURES", fixtures)

    defs = build_defs(settings, offline=True, first_day=date.fromisoformat(DAY))
    result = defs.resolve_job_def("daily_refresh").execute_in_process(
        partition_key=DAY, instance=dg.DagsterInstance.ephemeral(), raise_on_error=False
    )

    assert result.success  # one platform down is not a failed run
    materialized = result.asset_materializations_for_node("crawls")
    (crawl,) = [m.metadata for m in materialized if m.asset_key == crawl_key(broken)]
    assert crawl["status"].value == "failed" and crawl["error"].value
    evaluations = result.get_asset_check_evaluations()
    assert {e.check_name for e in evaluations} == {
        "crawled",
        "prices_believable",
        "fresh",
        "every_ask_has_a_plan",
        "watches",
        *(drift.check_name(platform) for platform in registry.platforms()),
        "every_job_has_a_plan",
    }
    checks = {e.asset_key: e.passed for e in evaluations if e.check_name == "crawled"}
    assert checks[crawl_key(broken)] is False
    assert all(checks[crawl_key(platform)] for platform in others)
    assert next(e for e in evaluations if e.check_name == "every_ask_has_a_plan").passed
    with duckdb.connect(str(settings.warehouse), read_only=True) as con:
        frame = daily_plans.plans_for_date(con)
    ok = frame[frame["status"] == "ok"]
    assert not ok.empty and broken not in set(ok["platform"])
    [cheapest] = [
        m for m in result.asset_materializations_for_node("plans") if m.asset_key.path == ["cheapest_plans"]
    ]
    preview = cheapest.metadata["preview"].value
    # the CLI's columns: each plan's ranking (by) and the total of a run it ranks by (USD/1B)
    assert "| model | by | plan |" in preview and "| run |" in preview and "| USD/1B |" in preview


def test_refresh_says_which_step_failed_and_exits_non_zero(env):
    result = CliRunner().invoke(
        app,
        ["refresh", "--offline", "--date", DAY, "--platform", "quotes"],
        env={**env, "GPUPLAN_MODELS": "7B,no-such-model"},
    )
    assert result.exit_code == 1
    assert "step failed" in result.output and "plans" in result.output
    assert "no-such-model" in result.output
