-- Per platform, its latest usable crawl of our own (history imports are history, not what is on
-- offer now). "Latest" is the crawl's own time (usable_runs.crawled_at), so loading an old crawl
-- file later does not replace a newer one. A run dated ahead of now by more than
-- clock_skew_tolerance() (the crawling host's clock was ahead as it loaded too) is not the latest
-- until then; its offers stay in `offers` and in the history of their run day.
-- A failed, skipped or empty crawl after it keeps it visible (an outage never reads as "sold out"),
-- but stale: the same rule as a plan day's carried crawl (30_day_runs.sql), for what reads the
-- latest crawls (`gpuplan gpus`, ad-hoc job plans):
--   stale        TRUE: the platform's latest crawl attempt of ours, after this one, did not work
--   stale_hours  how much older this crawl is than that attempt (0 when not stale); past
--                GPUPLAN_STALE_HOURS its offers drop out (judged_offers' max_stale_hours)
CREATE OR REPLACE VIEW latest_runs AS
WITH latest_attempts AS (
    SELECT platform, crawled_at_of(finished_at, started_at, loaded_at) AS attempted_at, status
    FROM crawl_runs
    WHERE source = 'crawl'
      AND NOT coalesce(offline, FALSE)
      AND crawled_at_of(finished_at, started_at, loaded_at)
          <= CAST(now() AT TIME ZONE 'UTC' AS TIMESTAMP) + clock_skew_tolerance()
    QUALIFY row_number() OVER (PARTITION BY platform ORDER BY attempted_at DESC, loaded_at DESC, crawl_id) = 1
),
latest AS (
    SELECT platform, crawl_id, status, run_day, crawled_at, offline
    FROM usable_runs
    WHERE source = 'crawl'
      AND crawled_at <= CAST(now() AT TIME ZONE 'UTC' AS TIMESTAMP) + clock_skew_tolerance()
    QUALIFY row_number() OVER (PARTITION BY platform ORDER BY crawled_at DESC, loaded_at DESC, crawl_id) = 1
)
SELECT
    l.*,
    coalesce(a.attempted_at > l.crawled_at AND NOT run_worked(a.status), FALSE) AS stale,
    CASE
        WHEN a.attempted_at > l.crawled_at AND NOT run_worked(a.status)
            THEN (epoch(a.attempted_at) - epoch(l.crawled_at)) / 3600
        ELSE 0
    END AS stale_hours
FROM latest AS l
LEFT JOIN latest_attempts AS a USING (platform);
