"""config.settings.cron_problem accepts what Dagster's schedule accepts: each case checked against
a `dg.ScheduleDefinition` made with it (Dagster checks the cron there, with its vendored
croniter), so the settings check and the daily schedule agree."""

from __future__ import annotations

import dagster as dg
import pytest

from config.settings import cron_problem

CASES = [
    "0 6 * * *",
    "@daily",
    "@hourly",
    "@reboot",  # not one Dagster runs
    "30 7 * * mon-fri",
    "*/15 * * * *",
    "0 6 1,15 * *",
    "0 6 * jan-mar *",
    "0 6 * * 7",
    "0 6 * * 0-7",
    "0 6 * * 1#2",
    "0 6 * * mon#5",
    "0 6 * * 1#6",
    "0 6 * * 1#2,3",
    "0 6 L * *",
    "0 6 1-L * *",
    "0 6 L-2 * *",
    "0 6 L/2 * *",
    "0 6 * * ?",
    "0 6 ? * *",
    "0 6 * * 5L",
    "0 6 15W * *",
    "0 24 * * *",
    "60 6 * * *",
    "0 6 0 * *",
    "0 6 * 13 *",
    "0 6 * * 8",
    "0 6 31 2 *",
    "0 6 30 feb *",
    "0 6 29 2 *",
    "0 6 31 4 *",
    "*/0 * * * *",
    "1-2-3 * * * *",
    "5-1 * * * *",
    "0 6 * January *",
    "0 6 * *",
    "0 6 * * * *",
    "0 6 * * ,1",
    " 0 6 * * * ",
    "daily",
]


@pytest.mark.parametrize("text", CASES)
def test_cron_agrees_with_dagster(text: str) -> None:
    try:
        dg.ScheduleDefinition(name="daily", cron_schedule=text, job_name="daily_refresh")
        dagster_runs_it = True
    except dg.DagsterInvalidDefinitionError:
        dagster_runs_it = False
    assert (cron_problem(text) is None) == dagster_runs_it, cron_problem(text)


def test_default_tokens_share_the_jobs_bound() -> None:
    """GPUPLAN_DEFAULT_TOKENS and a job's tokens are bounded alike (settings import nothing of ours)."""
    from config.settings import Settings, SettingsError
    from sizing.jobs import MAX_TOKENS

    assert Settings.from_env({"GPUPLAN_DEFAULT_TOKENS": repr(MAX_TOKENS)}).default_tokens == MAX_TOKENS
    with pytest.raises(SettingsError, match="GPUPLAN_DEFAULT_TOKENS"):
        Settings.from_env({"GPUPLAN_DEFAULT_TOKENS": repr(MAX_TOKENS * 1.001)})
