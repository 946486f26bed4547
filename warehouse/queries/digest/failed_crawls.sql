-- Platforms whose crawl feeding the day's plans failed, was partial or was skipped, with the error.
SELECT c.platform, c.status, r.error, r.started_at
FROM plan_crawls AS c
LEFT JOIN crawl_runs AS r USING (crawl_id)
WHERE c.plan_date = $day AND c.status IN ('failed', 'partial', 'skipped')
ORDER BY c.platform
