"""The daily schedule: runs `daily_refresh` for the current day, at `schedule_cron` in `schedule_timezone`."""

import dagster as dg

from config.days import today
from pipelines.dagster_jobs import daily_refresh


def build_daily_schedule(cron: str, timezone: str) -> dg.ScheduleDefinition:
    """Each tick plans the day it falls on, in `timezone` (default: 06:00 every day, Shanghai time)."""

    @dg.schedule(
        name="daily_refresh_schedule",
        job=daily_refresh,
        cron_schedule=cron,
        execution_timezone=timezone,
        description=f"Runs the whole graph for the day at cron '{cron}' ({timezone}); default 06:00 daily.",
    )
    def daily_refresh_schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
        day = today(timezone, context.scheduled_execution_time).isoformat()
        return dg.RunRequest(partition_key=day)

    return daily_refresh_schedule
