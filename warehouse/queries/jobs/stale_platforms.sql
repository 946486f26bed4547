-- Platforms the latest plans leave out as stale: every crawl that stands for them now (latest_runs)
-- is carried past $max_stale_hours (GPUPLAN_STALE_HOURS) from their latest attempt, which did not
-- stand for all. With the hours of the newest such crawl and when it crawled, for the reason a job
-- without a plan gives.
SELECT platform, min(stale_hours) AS stale_hours, max(crawled_at) AS crawled_at
FROM latest_runs
GROUP BY platform
HAVING bool_and(stale AND stale_hours > $max_stale_hours)
ORDER BY platform
