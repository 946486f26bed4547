-- Platforms whose crawl feeding the day's plans failed, was partial or was skipped, with the error,
-- and what the failure did to the day's plans (queries/plans/record_crawls.sql decided it):
--   carried       TRUE: its last good crawl stands in the plans (stale: price as of it, stock unknown)
--   last_good_at  when that last good crawl crawled (NULL: there was none)
--   stale_hours   how much older it is than the failed crawl; with carried FALSE, over
--                 GPUPLAN_STALE_HOURS: its offers dropped out of the day's plans
SELECT
    c.platform,
    c.status,
    r.error,
    r.started_at,
    c.carried,
    crawled_at_of(g.finished_at, g.started_at, g.loaded_at) AS last_good_at,
    (epoch(crawled_at_of(r.finished_at, r.started_at, r.loaded_at))
        - epoch(crawled_at_of(g.finished_at, g.started_at, g.loaded_at))) / 3600 AS stale_hours
FROM plan_crawls AS c
LEFT JOIN crawl_runs AS r USING (crawl_id)
LEFT JOIN crawl_runs AS g ON g.crawl_id = c.last_good_crawl_id
WHERE c.plan_date = $day AND c.status IN ('failed', 'partial', 'skipped')
ORDER BY c.platform
