-- The drift checks read the offers of their crawls by the crawls' run days as well as their ids
-- (issue 16): crawl_id is a content hash, so `offers.crawl_id IN (...)` prunes no row group and
-- each of the 2 drift queries per platform scanned every offer (9 platforms, twice a refresh:
-- ~0.2 s a refresh at a year of history, 7.3M offers); offers.run_day (migration 031) lets the
-- scan skip the row groups of other days.
--
-- The day a run counts for: the UTC date it started, else the date it was loaded. The rule that
-- daily_runs (030), usable_runs (061) and day_runs (040) spell inline and both loaders store in
-- offers.run_day (load_stage_feed.sql calls this; history_stage_imported.sql takes the import's
-- day); new SQL calls this.
CREATE MACRO run_day_of(started_at, loaded_at) AS CAST(coalesce(started_at, loaded_at) AS DATE);

-- Migration 075's macro, the same crawls, now with each crawl's run_day.
CREATE OR REPLACE MACRO drift_crawls(for_platform, for_date, history) AS TABLE
WITH today AS (
    SELECT c.crawl_id, r.offline, run_day_of(r.started_at, r.loaded_at) AS run_day
    FROM plan_crawls AS c
    JOIN crawl_runs AS r USING (crawl_id)
    WHERE c.platform = for_platform
      AND c.plan_date = for_date
      AND r.status IN ('ok', 'partial')
      AND r.source = 'crawl'
),
earlier AS (
    SELECT c.crawl_id, any_value(run_day_of(r.started_at, r.loaded_at)) AS run_day, max(c.plan_date) AS last_day
    FROM plan_crawls AS c
    JOIN crawl_runs AS r USING (crawl_id)
    WHERE c.platform = for_platform
      AND c.plan_date < for_date
      AND r.status IN ('ok', 'partial')
      AND r.source = 'crawl'
      AND r.offline = (SELECT offline FROM today)
      AND c.crawl_id NOT IN (SELECT crawl_id FROM today)
    GROUP BY c.crawl_id
    ORDER BY last_day DESC
    LIMIT history
)
SELECT crawl_id, run_day, TRUE AS is_today FROM today
UNION ALL
SELECT crawl_id, run_day, FALSE AS is_today FROM earlier;
