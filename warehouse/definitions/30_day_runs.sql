-- The runs of each day: the crawls the pipeline recorded for the plan day (plan_crawls, those that
-- worked) where the day has any, else the run that stands for each platform that day (daily_runs):
-- history the pipeline never planned. A crawl recorded for a plan day stands for that day only
-- (the 06:00 Shanghai run starts at 22:00 UTC the day before: its run day is not its plan day).
-- A platform whose recorded crawl did not work but whose last good crawl is carried (plan_crawls.
-- carried, decided by queries/plans/record_crawls.sql within GPUPLAN_STALE_HOURS) stands with that
-- crawl, stale: its prices as of its crawl, its stock unknown (judged_offers). Past the bound the
-- platform has no run that day: its offers drop out.
--   run_day     the run's own day, for pruning the offers scan
--   crawled_at  when the run crawled (crawled_at_of): what "as of" a stale offer's price says
--   stale       TRUE: carried from an earlier crawl because the day's crawl failed
CREATE OR REPLACE VIEW day_runs AS
SELECT
    p.plan_date AS day,
    p.platform,
    r.crawl_id,
    r.status,
    run_day_of(r.started_at, r.loaded_at) AS run_day,
    crawled_at_of(r.finished_at, r.started_at, r.loaded_at) AS crawled_at,
    NOT run_worked(p.status) AS stale
FROM plan_crawls AS p
JOIN crawl_runs AS r
  ON r.crawl_id = CASE WHEN run_worked(p.status) THEN p.crawl_id WHEN p.carried THEN p.last_good_crawl_id END
WHERE run_worked(r.status)
UNION ALL
SELECT d.day, d.platform, d.crawl_id, d.status, d.day AS run_day, d.crawled_at, FALSE AS stale
FROM daily_runs AS d
WHERE d.day NOT IN (SELECT plan_date FROM plan_crawls)
  AND d.crawl_id NOT IN (SELECT crawl_id FROM plan_crawls);
