-- Platforms whose crawl feeding the day's plans failed, was partial or was skipped, or that the
-- day's run did not crawl ('not_crawled', recorded within GPUPLAN_STALE_HOURS and on the day it
-- drops out), with the error, and what it did to the day's plans (queries/plans/record_crawls.sql
-- decided it, by the carry rule: definitions/15_crawl_carries.sql):
--   carried       TRUE: its last good crawl stands in the plans (stale: price as of it, stock
--                 unknown), beside a partial crawl for what that crawl did not read
--   last_good_at  when that last good crawl crawled (NULL: there was none)
--   stale_hours   how far its prices are from the day's attempt (carry_hours); with carried FALSE,
--                 over GPUPLAN_STALE_HOURS: its offers dropped out of the day's plans
-- and, with status 'dated_out', the platforms whose crawl worked but read a catalog dated more than
-- GPUPLAN_STALE_HOURS before it crawled (plan_crawls.dated_out, the same rule): their offers dropped
-- out; catalog_date says its date, stale_hours how much older than the crawl its prices are.
SELECT
    c.platform,
    CASE WHEN coalesce(c.dated_out, FALSE) THEN 'dated_out' ELSE c.status END AS status,
    CASE WHEN c.status <> 'not_crawled' THEN r.error END AS error,
    CASE WHEN c.status <> 'not_crawled' THEN r.started_at END AS started_at,
    c.carried,
    crawled_at_of(g.finished_at, g.started_at, g.loaded_at) AS last_good_at,
    CASE
        WHEN coalesce(c.dated_out, FALSE) THEN carry_hours(
            crawled_at_of(r.finished_at, r.started_at, r.loaded_at),
            priced_at_of(crawled_at_of(r.finished_at, r.started_at, r.loaded_at), r.catalog_date)
        )
        ELSE coalesce(
            k.carry_hours,
            carry_hours(
                crawled_at_of(r.finished_at, r.started_at, r.loaded_at),
                priced_at_of(crawled_at_of(g.finished_at, g.started_at, g.loaded_at), g.catalog_date)
            )
        )
    END AS stale_hours,
    CASE WHEN coalesce(c.dated_out, FALSE) THEN r.catalog_date END AS catalog_date
FROM plan_crawls AS c
LEFT JOIN crawl_runs AS r USING (crawl_id)
LEFT JOIN crawl_runs AS g ON g.crawl_id = c.last_good_crawl_id
LEFT JOIN plan_carried_crawls AS k
  ON k.plan_date = c.plan_date AND k.platform = c.platform AND k.crawl_id = c.last_good_crawl_id
WHERE c.plan_date = $day
  AND (c.status IN ('failed', 'partial', 'skipped', 'not_crawled') OR coalesce(c.dated_out, FALSE))
ORDER BY c.platform
