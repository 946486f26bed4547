-- The runs of each day: the crawls the pipeline recorded for the plan day (plan_crawls) where the
-- day has any, else the run that stands for each platform that day (daily_runs): history the
-- pipeline never planned. A crawl recorded for a plan day stands for that day only (the 06:00
-- Shanghai run starts at 22:00 UTC the day before: its run day is not its plan day).
-- A recorded crawl that worked stands, fresh, unless its prices were past the bound when it crawled
-- (plan_crawls.dated_out: it read a catalog dated earlier, the carry rule). The crawls the carry rule (15_crawl_carries.sql)
-- carries into the day (plan_carried_crawls, decided when the day was recorded, within
-- GPUPLAN_STALE_HOURS) stand too, stale: their prices as of their crawl, their stock unknown
-- (judged_offers); beside a partial crawl only for what it did not read (read_by, standing_offers).
-- Past the bound nothing is carried: the platform's offers drop out.
--   run_day     the run's own day, for pruning the offers scan
--   crawled_at  when the run crawled (crawled_at_of): what "as of" a stale offer's price says
--   stale       TRUE: carried from an earlier crawl because the day's crawl failed, was partial, or
--               did not happen
--   read_by     the partial crawls above a carried run: what they read is left out of it
CREATE OR REPLACE VIEW day_runs AS
WITH stood AS (
    SELECT plan_date, platform, crawl_id, FALSE AS stale, CAST([] AS VARCHAR[]) AS read_by
    FROM plan_crawls
    WHERE run_worked(status) AND NOT coalesce(dated_out, FALSE)
    UNION ALL
    SELECT plan_date, platform, crawl_id, TRUE AS stale, read_by
    FROM plan_carried_crawls
)
SELECT
    s.plan_date AS day,
    s.platform,
    r.crawl_id,
    r.status,
    run_day_of(r.started_at, r.loaded_at) AS run_day,
    crawled_at_of(r.finished_at, r.started_at, r.loaded_at) AS crawled_at,
    s.stale,
    s.read_by
FROM stood AS s
JOIN crawl_runs AS r ON r.crawl_id = s.crawl_id
WHERE run_worked(r.status)
UNION ALL
SELECT d.day, d.platform, d.crawl_id, d.status, d.day AS run_day, d.crawled_at, FALSE AS stale, [] AS read_by
FROM daily_runs AS d
WHERE d.day NOT IN (SELECT plan_date FROM plan_crawls)
  AND d.crawl_id NOT IN (SELECT crawl_id FROM plan_crawls);
