-- The day of the latest run (daily_runs.day's expression; NULL in an empty warehouse): crawl_runs
-- holds one row per run, so this stays cheap however many offers the runs loaded.
SELECT max(CAST(coalesce(started_at, loaded_at) AS DATE)) AS latest_day
FROM crawl_runs
