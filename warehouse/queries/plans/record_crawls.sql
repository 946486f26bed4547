-- Record the crawls of `recorded_crawls` (platform, crawl_id, status) as the ones behind $plan_date's
-- offers; a platform already recorded for that day is replaced (a re-crawl wins), others stay.
-- Demo data never poses as live data: an offline crawl of a platform that has a usable live crawl
-- (usable_runs) records that platform's latest live crawl up to the day instead, so
-- "demo, then live, then demo again" keeps planning from the live offers.
-- A crawl that does not stand for all (failed, skipped, empty, partial: the carry rule,
-- definitions/15_crawl_carries.sql) is recorded as it is (a failure stays a failure), with the
-- platform's last good crawl (crawl_carries.last_good_crawl_id), and carried = TRUE when the two are
-- at most $stale_hours hours apart (carry_hours): that crawl's offers then stand in the day's plans,
-- marked stale, beside a partial crawl only for what it did not read (day_runs). Past the bound
-- nothing is carried.
-- A crawl that worked but whose prices were more than $stale_hours hours old when it crawled (it read
-- a catalog dated earlier: carry_hours(crawled_at, priced_at), the same rule) is recorded with
-- dated_out = TRUE: its offers stand nowhere in the day's plans, as an old crawl's past the bound.
-- With $carry_uncrawled (the daily run), each other platform with a usable crawl of ours, not
-- recorded for the day yet, is recorded as 'not_crawled' (crawl_id: its last good crawl, the one
-- nearest the latest of the crawls recorded now, as crawl_carries picks): carried the same way. Past the bound it is
-- recorded only on the day it drops out, not carried.
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
crawled AS (
    SELECT
        a.platform,
        a.crawl_id,
        a.status,
        c.last_good_crawl_id,
        coalesce(c.carry_hours <= CAST($stale_hours AS DOUBLE), FALSE) AS carried,
        coalesce(
            run_worked(a.status) AND carry_hours(
                crawled_at_of(r.finished_at, r.started_at, r.loaded_at),
                priced_at_of(crawled_at_of(r.finished_at, r.started_at, r.loaded_at), r.catalog_date)
            ) > CAST($stale_hours AS DOUBLE),
            FALSE
        ) AS dated_out
    FROM recorded AS a
    LEFT JOIN crawl_runs AS r USING (crawl_id)
    LEFT JOIN crawl_carries AS c USING (crawl_id)
),
run_time AS (
    SELECT max(crawled_at_of(r.finished_at, r.started_at, r.loaded_at)) AS attempted_at
    FROM recorded AS a
    JOIN crawl_runs AS r USING (crawl_id)
),
not_crawled AS (
    SELECT
        u.platform,
        u.crawl_id,
        'not_crawled' AS status,
        u.crawl_id AS last_good_crawl_id,
        carry_hours(t.attempted_at, u.priced_at) <= CAST($stale_hours AS DOUBLE) AS carried,
        FALSE AS dated_out
    FROM usable_runs AS u, run_time AS t
    WHERE $carry_uncrawled
      AND u.source = 'crawl'
      AND u.platform NOT IN (SELECT platform FROM recorded)
      AND u.platform NOT IN (SELECT platform FROM plan_crawls WHERE plan_date = CAST($plan_date AS DATE))
    QUALIFY row_number() OVER (
        PARTITION BY u.platform
        ORDER BY carry_hours(t.attempted_at, u.crawled_at), u.crawled_at <= t.attempted_at DESC, u.loaded_at DESC, u.crawl_id
    ) = 1
)
SELECT
    CAST($plan_date AS DATE) AS plan_date,
    platform,
    crawl_id,
    status,
    last_good_crawl_id,
    carried,
    dated_out,
    $recorded_at AS recorded_at
FROM (
    SELECT * FROM crawled
    UNION ALL BY NAME
    -- past the bound, only on the day it drops out (it stood the plan day before): the digest says so
    SELECT * FROM not_crawled
    WHERE carried OR platform IN (
        SELECT platform
        FROM plan_crawls
        WHERE plan_date = (SELECT max(plan_date) FROM plan_crawls WHERE plan_date < CAST($plan_date AS DATE))
          AND (run_worked(status) OR carried)
    )
)
