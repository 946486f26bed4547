-- The platforms of one day in the dataset's manifest, with their crawl status: the crawls the day's
-- plans used (plan_crawls: a failed crawl, and whether the last good one was carried), else the
-- crawls that observed the day's offers.
WITH planned AS (
    SELECT platform, status, crawl_id, carried
    FROM plan_crawls
    WHERE plan_date = $day
),
observed AS (
    SELECT o.platform, r.status, o.crawl_id, false AS carried
    FROM (SELECT DISTINCT platform, crawl_id FROM offers WHERE observed_date = $day) AS o
    LEFT JOIN crawl_runs AS r USING (crawl_id)
    WHERE NOT EXISTS (SELECT 1 FROM planned)
)
SELECT platform, coalesce(status, 'imported') AS status, crawl_id, carried
FROM (SELECT * FROM planned UNION ALL SELECT * FROM observed)
ORDER BY platform, crawl_id
