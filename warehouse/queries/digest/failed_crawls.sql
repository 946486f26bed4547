-- Platforms whose crawl feeding the day's plans failed, was partial or was skipped, or that the
-- day's run did not crawl ('not_crawled', recorded within GPUPLAN_STALE_HOURS and on the day it
-- drops out), with the error, and what it did to the day's plans (queries/plans/record_crawls.sql
-- decided it, by the carry rule: definitions/15_crawl_carries.sql):
--   carried       TRUE: its last good crawl stands in the plans (stale: price as of it, stock
--                 unknown), beside a partial crawl for what that crawl did not read
--   last_good_at  when that last good crawl crawled (NULL: there was none)
--   stale_hours   how far it is from the day's attempt (carry_hours); with carried FALSE, over
--                 GPUPLAN_STALE_HOURS: its offers dropped out of the day's plans
SELECT
    c.platform,
    c.status,
    CASE WHEN c.status <> 'not_crawled' THEN r.error END AS error,
    CASE WHEN c.status <> 'not_crawled' THEN r.started_at END AS started_at,
    c.carried,
    crawled_at_of(g.finished_at, g.started_at, g.loaded_at) AS last_good_at,
    coalesce(
        k.carry_hours,
        carry_hours(
            crawled_at_of(r.finished_at, r.started_at, r.loaded_at),
            crawled_at_of(g.finished_at, g.started_at, g.loaded_at)
        )
    ) AS stale_hours
FROM plan_crawls AS c
LEFT JOIN crawl_runs AS r USING (crawl_id)
LEFT JOIN crawl_runs AS g ON g.crawl_id = c.last_good_crawl_id
LEFT JOIN plan_carried_crawls AS k
  ON k.plan_date = c.plan_date AND k.platform = c.platform AND k.crawl_id = c.last_good_crawl_id
WHERE c.plan_date = $day AND c.status IN ('failed', 'partial', 'skipped', 'not_crawled')
ORDER BY c.platform
