-- The crawls that make a day's offers, one per platform: how each went, what it loaded, and whether
-- it is our crawl ('crawl') or imported history ('import:<format>').
SELECT
    c.platform,
    r.source,
    r.status,
    r.error,
    r.items_yielded,
    r.offers_loaded,
    r.items_rejected,
    r.offline,
    r.finished_at,
    c.crawl_id
FROM plan_crawls AS c
JOIN crawl_runs AS r USING (crawl_id)
WHERE c.plan_date = $plan_date
ORDER BY c.platform
