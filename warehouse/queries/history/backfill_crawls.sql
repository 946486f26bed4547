-- The crawls each day's plans read, for every day in [$first, $last] (NULL = open) that has data.
-- A (day, platform) the pipeline already recorded in plan_crawls keeps its crawl (already_recorded);
-- a platform the day lacks gets the run that stands for it that day (daily_runs: our own crawl before
-- an import, failed and empty runs never).
WITH bounds AS (
    SELECT
        coalesce(CAST($first AS DATE), DATE '0001-01-01') AS first_day,
        coalesce(CAST($last AS DATE), DATE '9999-12-31') AS last_day
)
SELECT r.day, r.platform, r.crawl_id, r.status, FALSE AS already_recorded
FROM daily_runs AS r, bounds AS b
WHERE r.day BETWEEN b.first_day AND b.last_day
  AND NOT EXISTS (SELECT 1 FROM plan_crawls AS p WHERE p.plan_date = r.day AND p.platform = r.platform)
UNION ALL
SELECT p.plan_date AS day, p.platform, p.crawl_id, p.status, TRUE AS already_recorded
FROM plan_crawls AS p, bounds AS b
WHERE p.plan_date BETWEEN b.first_day AND b.last_day
ORDER BY day, platform
