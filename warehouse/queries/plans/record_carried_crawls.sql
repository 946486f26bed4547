-- The crawls carried into $plan_date (plan_carried_crawls), from its recorded crawls (plan_crawls,
-- queries/plans/record_crawls.sql), by the carry rule (definitions/15_crawl_carries.sql): for each
-- platform whose last good crawl is carried, that crawl and what it brings (carry_chain), each while
-- at most $stale_hours hours from the day's attempt (the failed or partial crawl; for one not
-- crawled, the latest crawl the day recorded) to its prices (priced_at). The day's rows are replaced (run after record_crawls).
INSERT INTO plan_carried_crawls BY NAME
WITH day_time AS (
    SELECT max(crawled_at_of(r.finished_at, r.started_at, r.loaded_at)) AS attempted_at
    FROM plan_crawls AS p
    JOIN crawl_runs AS r USING (crawl_id)
    WHERE p.plan_date = CAST($plan_date AS DATE) AND p.status <> 'not_crawled'
),
carrying AS (
    SELECT
        p.platform,
        CASE WHEN p.status <> 'not_crawled' THEN p.crawl_id END AS attempt_id,
        p.last_good_crawl_id,
        CASE
            WHEN p.status = 'not_crawled' THEN coalesce(t.attempted_at, g.crawled_at)
            ELSE crawled_at_of(r.finished_at, r.started_at, r.loaded_at)
        END AS attempted_at,
        p.status <> 'not_crawled' AND crawl_stands_for(r.status, r.offers_loaded) = 'what_it_read' AS partial
    FROM plan_crawls AS p
    JOIN crawl_runs AS r USING (crawl_id)
    JOIN usable_runs AS g ON g.crawl_id = p.last_good_crawl_id
    CROSS JOIN day_time AS t
    WHERE p.plan_date = CAST($plan_date AS DATE) AND p.carried
)
SELECT
    CAST($plan_date AS DATE) AS plan_date,
    c.platform,
    ch.crawl_id,
    CASE WHEN c.partial THEN list_prepend(c.attempt_id, ch.read_by) ELSE ch.read_by END AS read_by,
    carry_hours(c.attempted_at, ch.priced_at) AS carry_hours
FROM carrying AS c
JOIN carry_chain AS ch ON ch.head = c.last_good_crawl_id AND ch.crawl_id IS DISTINCT FROM c.attempt_id
WHERE ch.crawl_id = c.last_good_crawl_id OR carry_hours(c.attempted_at, ch.priced_at) <= CAST($stale_hours AS DOUBLE)
