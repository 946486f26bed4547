-- Record the crawls of `recorded_crawls` (platform, crawl_id, status) as the ones behind $plan_date's
-- offers; a platform already recorded for that day is replaced (a re-crawl wins), others stay.
-- Demo data never poses as live data: an offline crawl of a platform that has a usable live crawl
-- (usable_runs) records that platform's latest live crawl up to the day instead, so
-- "demo, then live, then demo again" keeps planning from the live offers.
-- A crawl that did not work (failed, skipped) is recorded as it is (the failure stays a failure),
-- with the platform's last good crawl of ours before it (last_good_crawl_id), and carried = TRUE
-- when that crawl is at most $stale_hours hours older than the failed one (crawled_at_of both): its
-- offers then stand in the day's plans, marked stale (day_runs). Past the bound nothing is carried.
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
),
recorded AS (
    SELECT
        i.platform,
        CASE WHEN i.offline AND l.crawl_id IS NOT NULL THEN l.crawl_id ELSE i.crawl_id END AS crawl_id,
        CASE WHEN i.offline AND l.crawl_id IS NOT NULL THEN l.status ELSE i.status END AS status
    FROM incoming AS i
    LEFT JOIN latest_live AS l USING (platform)
),
last_good AS (
    SELECT
        a.platform,
        u.crawl_id AS last_good_crawl_id,
        epoch(crawled_at_of(r.finished_at, r.started_at, r.loaded_at)) - epoch(u.crawled_at)
            <= CAST($stale_hours AS DOUBLE) * 3600 AS carried
    FROM recorded AS a
    JOIN crawl_runs AS r USING (crawl_id)
    JOIN usable_runs AS u
      ON u.platform = a.platform
     AND u.source = 'crawl'
     AND u.crawl_id <> a.crawl_id
     AND u.crawled_at <= crawled_at_of(r.finished_at, r.started_at, r.loaded_at)
    WHERE NOT run_worked(a.status)
    QUALIFY row_number() OVER (PARTITION BY a.platform ORDER BY u.crawled_at DESC, u.loaded_at DESC, u.crawl_id) = 1
)
SELECT
    CAST($plan_date AS DATE) AS plan_date,
    a.platform,
    a.crawl_id,
    a.status,
    g.last_good_crawl_id,
    coalesce(g.carried, FALSE) AS carried,
    $recorded_at AS recorded_at
FROM recorded AS a
LEFT JOIN last_good AS g USING (platform)
