-- A crawl dated in the future (the crawling host's clock ahead) must not stand as a platform's
-- latest crawl until that date comes, nor keep the freshness check green (issue 14).
--   1. A crawl cannot have finished after it was loaded: its time is capped by loaded_at, the
--      loader's clock, which a crawl's own summary cannot move.
--   2. A run whose time (so capped) is still ahead of now, by more than clock_skew_tolerance(), was
--      written by a host whose clock was ahead as it loaded too: it is not the latest run until
--      then (its offers stay in `offers` and in the history of their run day).

-- How far ahead of this host's clock a run may be dated and still count as now: the skew of hosts
-- kept by NTP is well under a second; a minute covers a host that is not, and a summary written
-- just before a leap.
CREATE MACRO clock_skew_tolerance() AS INTERVAL 1 MINUTE;

CREATE OR REPLACE VIEW usable_runs AS
WITH live_platforms AS (
    SELECT DISTINCT platform
    FROM crawl_runs
    WHERE status IN ('ok', 'partial') AND offers_loaded > 0 AND NOT offline
)
SELECT
    r.*,
    CAST(coalesce(r.started_at, r.loaded_at) AS DATE) AS run_day,
    least(coalesce(r.finished_at, r.started_at, r.loaded_at), r.loaded_at) AS crawled_at
FROM crawl_runs AS r
WHERE r.status IN ('ok', 'partial')
  AND r.offers_loaded > 0
  AND (NOT r.offline OR r.platform NOT IN (SELECT platform FROM live_platforms));

CREATE OR REPLACE VIEW latest_runs AS
SELECT platform, crawl_id, status, run_day, crawled_at, offline
FROM usable_runs
WHERE source = 'crawl'
  AND crawled_at <= CAST(now() AT TIME ZONE 'UTC' AS TIMESTAMP) + clock_skew_tolerance()
QUALIFY row_number() OVER (PARTITION BY platform ORDER BY crawled_at DESC, loaded_at DESC, crawl_id) = 1;
