-- A platform's recent crawl volume: the median of items yielded by the crawls that fed the plans of
-- the $days days before $plan_date, counting only crawls that worked (run_worked), so an
-- outage does not lower the bar. days = how many such days there were (0: no history yet).
SELECT
    median(r.items_yielded) AS median_items,
    count(*) AS days
FROM plan_crawls AS c
JOIN crawl_runs AS r USING (crawl_id)
WHERE c.platform = $platform
  AND c.plan_date < $plan_date
  AND c.plan_date >= CAST($plan_date AS DATE) - CAST($days AS INTEGER)
  AND run_worked(r.status)
  AND r.source = 'crawl'  -- imported history recorded for a day (a backfill) is not a crawl volume
