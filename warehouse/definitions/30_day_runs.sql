-- The runs of each day: the crawls the pipeline recorded for the plan day (plan_crawls, those that
-- worked) where the day has any, else the run that stands for each platform that day (daily_runs):
-- history the pipeline never planned. A crawl recorded for a plan day stands for that day only
-- (the 06:00 Shanghai run starts at 22:00 UTC the day before: its run day is not its plan day).
-- `run_day` is the run's own day, for pruning the offers scan.
CREATE OR REPLACE VIEW day_runs AS
SELECT
    p.plan_date AS day,
    p.platform,
    p.crawl_id,
    r.status,
    run_day_of(r.started_at, r.loaded_at) AS run_day
FROM plan_crawls AS p
JOIN crawl_runs AS r USING (crawl_id)
WHERE run_worked(r.status)
UNION ALL
SELECT d.day, d.platform, d.crawl_id, d.status, d.day AS run_day
FROM daily_runs AS d
WHERE d.day NOT IN (SELECT plan_date FROM plan_crawls)
  AND d.crawl_id NOT IN (SELECT crawl_id FROM plan_crawls);
