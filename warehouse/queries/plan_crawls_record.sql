-- Record the crawls of `recorded_crawls` (platform, crawl_id, status) as the ones behind $plan_date's
-- offers; a platform already recorded for that day is replaced (a re-crawl wins), others stay.
INSERT OR REPLACE INTO plan_crawls BY NAME
SELECT CAST($plan_date AS DATE) AS plan_date, platform, crawl_id, status, $recorded_at AS recorded_at
FROM recorded_crawls
