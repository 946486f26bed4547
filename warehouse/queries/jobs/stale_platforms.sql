-- Platforms the latest plans leave out as stale: every crawl that stands for them now (latest_runs)
-- has prices past $max_stale_hours (GPUPLAN_STALE_HOURS) by the carry rule: carried that far from
-- their latest attempt, which did not stand for all, or read a catalog dated that much before it
-- crawled. With the hours of the newest such crawl, when it crawled and, when its own catalog's date
-- is what put it past the bound (it is not carried), that date: for the reason a job without a plan
-- gives.
SELECT
    l.platform,
    min(l.stale_hours) AS stale_hours,
    max(l.crawled_at) AS crawled_at,
    max(r.catalog_date) FILTER (WHERE NOT l.stale) AS catalog_date
FROM latest_runs AS l
JOIN crawl_runs AS r USING (crawl_id)
GROUP BY l.platform
HAVING bool_and(l.stale_hours > $max_stale_hours)
ORDER BY l.platform
