-- The crawls a platform's drift check compares (warehouse/drift.py, queries drift/crawl_drift and
-- drift/crawl_drift_prices), each with its run_day (offers.run_day: it lets the scan of their offers
-- skip the row groups of other days, which crawl_id, a content hash, cannot): the crawl behind
-- for_date's offers of the platform (is_today), and the platform's own last `history` good crawls
-- before it: status ok or partial, our crawls (no imports), offline only against offline, a crawl
-- standing for several days (a platform not re-crawled) counted once. One home for the rule, so both
-- drift queries compare the same crawls.
CREATE OR REPLACE MACRO drift_crawls(for_platform, for_date, history) AS TABLE
WITH today AS (
    SELECT c.crawl_id, r.offline, run_day_of(r.started_at, r.loaded_at) AS run_day
    FROM plan_crawls AS c
    JOIN crawl_runs AS r USING (crawl_id)
    WHERE c.platform = for_platform
      AND c.plan_date = for_date
      AND run_worked(r.status)
      AND r.source = 'crawl'
),
earlier AS (
    SELECT c.crawl_id, any_value(run_day_of(r.started_at, r.loaded_at)) AS run_day, max(c.plan_date) AS last_day
    FROM plan_crawls AS c
    JOIN crawl_runs AS r USING (crawl_id)
    WHERE c.platform = for_platform
      AND c.plan_date < for_date
      AND run_worked(r.status)
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
