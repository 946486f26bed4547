-- Record the crawls of `recorded_crawls` (platform, crawl_id, status) as the ones behind $plan_date's
-- offers; a platform already recorded for that day is replaced (a re-crawl wins), others stay.
-- Demo data never poses as live data: an offline crawl of a platform that has a usable live crawl
-- (usable_runs) records that platform's latest live crawl up to the day instead, so
-- "demo, then live, then demo again" keeps planning from the live offers.
INSERT OR REPLACE INTO plan_crawls BY NAME
WITH incoming AS (
    SELECT c.platform, c.crawl_id, c.status, coalesce(r.offline, FALSE) AS offline
    FROM recorded_crawls AS c
    LEFT JOIN crawl_runs AS r USING (crawl_id)
),
latest_live AS (
    SELECT platform, crawl_id, status
    FROM usable_runs
    WHERE NOT offline AND source = 'crawl' AND run_day <= CAST($plan_date AS DATE)
    QUALIFY row_number() OVER (PARTITION BY platform ORDER BY crawled_at DESC, loaded_at DESC, crawl_id) = 1
)
SELECT
    CAST($plan_date AS DATE) AS plan_date,
    i.platform,
    CASE WHEN i.offline AND l.crawl_id IS NOT NULL THEN l.crawl_id ELSE i.crawl_id END AS crawl_id,
    CASE WHEN i.offline AND l.crawl_id IS NOT NULL THEN l.status ELSE i.status END AS status,
    $recorded_at AS recorded_at
FROM incoming AS i
LEFT JOIN latest_live AS l USING (platform)
