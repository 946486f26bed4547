-- The day a run counts for: the UTC date it started, else the date it was loaded. Both loaders
-- store it in offers.run_day (queries/load/stage_feed.sql calls this; queries/history/stage_imported.sql
-- takes the day the import's file states), and every view that dates a run calls it.
-- observed_date cannot stand in for it: an offline replay keeps the snapshot's own date, far from
-- its run's day.
CREATE OR REPLACE MACRO run_day_of(started_at, loaded_at) AS CAST(coalesce(started_at, loaded_at) AS DATE);
