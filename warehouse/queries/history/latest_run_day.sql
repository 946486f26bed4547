-- The day of the latest run (run_day_of: daily_runs.day's rule; NULL in an empty
-- warehouse): crawl_runs holds one row per run, so this stays cheap however many offers the runs loaded.
SELECT max(run_day_of(started_at, loaded_at)) AS latest_day
FROM crawl_runs
