-- Which run stands for a platform on a day, and that run's offers: the basis of price trends and of
-- backfilled plans. Imported history (crawl_runs.source 'import:<format>') and our own crawls share
-- `platform`; the run's `source` tells them apart, and where both cover a day our own crawl wins.
-- A day is the UTC date the run observed: `started_at` (imports stamp the day their file states).
-- Only runs that loaded offers count, so a failed or empty run (a header-only catalog) never hides
-- the offers of an earlier day, nor shows a platform as sold out.

CREATE VIEW daily_runs AS
SELECT
    CAST(coalesce(started_at, loaded_at) AS DATE) AS day,
    platform,
    crawl_id,
    source,
    status
FROM crawl_runs
WHERE status IN ('ok', 'partial')
  AND offers_loaded > 0
QUALIFY row_number() OVER (
    PARTITION BY CAST(coalesce(started_at, loaded_at) AS DATE), platform
    ORDER BY (source = 'crawl') DESC, started_at DESC NULLS LAST, loaded_at DESC, crawl_id
) = 1;

-- One row per offer of the run that stands for its platform and day.
CREATE VIEW daily_run_offers AS
SELECT
    r.day,
    o.*
FROM daily_runs AS r
JOIN offers AS o ON o.crawl_id = r.crawl_id AND o.platform = r.platform;
