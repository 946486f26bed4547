-- The dataset days one daily run touched: its plan day, and the observation days (UTC) of the crawls
-- its plans used (a run at 06:00 in Shanghai observes on the previous day in UTC).
SELECT DISTINCT day FROM (
    SELECT CAST($day AS DATE) AS day
    UNION
    SELECT DISTINCT o.observed_date
    FROM offers AS o
    WHERE o.crawl_id IN (SELECT crawl_id FROM plan_crawls WHERE plan_date = $day)
)
ORDER BY day
