-- The crawls that make a day's offers, one per platform: how each went, what it loaded, and whether
-- it is our crawl ('crawl') or imported history ('import:<format>'). A platform the day's run did not
-- crawl says 'not_crawled' and loaded nothing today (its last good crawl is carried, or past
-- GPUPLAN_STALE_HOURS drops out: queries/plans/record_crawls.sql).
SELECT
    c.platform,
    r.source,
    CASE WHEN c.status = 'not_crawled' THEN c.status ELSE r.status END AS status,
    CASE WHEN c.status <> 'not_crawled' THEN r.error END AS error,
    CASE WHEN c.status <> 'not_crawled' THEN r.items_yielded ELSE 0 END AS items_yielded,
    CASE WHEN c.status <> 'not_crawled' THEN r.offers_loaded ELSE 0 END AS offers_loaded,
    CASE WHEN c.status <> 'not_crawled' THEN r.items_rejected ELSE 0 END AS items_rejected,
    r.offline,
    r.finished_at,
    c.crawl_id
FROM plan_crawls AS c
JOIN crawl_runs AS r USING (crawl_id)
WHERE c.plan_date = $plan_date
ORDER BY c.platform
