-- How the crawl behind $plan_date's offers of $platform compares with the platform's own last
-- $history good crawls before it (which crawls: the drift_crawls macro):
-- offers loaded, the share of offers whose GPU name matched no catalog card, the share of quotes
-- rejected. One row; history_crawls = 0 when there is nothing to compare with (or no good crawl today).
WITH crawls AS (
    SELECT crawl_id, run_day, is_today FROM drift_crawls($platform, $plan_date, $history)
),
metrics AS (
    SELECT
        k.is_today,
        r.offers_loaded,
        coalesce(u.unknown_share, 0.0) AS unknown_share,
        r.items_rejected / nullif(r.offers_loaded + r.items_rejected, 0) AS rejected_share
    FROM crawls AS k
    JOIN crawl_runs AS r USING (crawl_id)
    LEFT JOIN (
        -- by run day too: crawl_id alone prunes no row group of offers
        SELECT o.crawl_id, avg(CASE WHEN o.gpu_model IS NULL THEN 1.0 ELSE 0.0 END) AS unknown_share
        FROM offers AS o
        JOIN crawls AS c ON c.crawl_id = o.crawl_id AND c.run_day = o.run_day
        GROUP BY o.crawl_id
    ) AS u USING (crawl_id)
)
SELECT
    max(offers_loaded) FILTER (WHERE is_today) AS today_offers,
    max(unknown_share) FILTER (WHERE is_today) AS today_unknown_share,
    max(rejected_share) FILTER (WHERE is_today) AS today_rejected_share,
    count(*) FILTER (WHERE NOT is_today) AS history_crawls,
    median(offers_loaded) FILTER (WHERE NOT is_today) AS usual_offers,
    median(unknown_share) FILTER (WHERE NOT is_today) AS usual_unknown_share,
    median(rejected_share) FILTER (WHERE NOT is_today) AS usual_rejected_share
FROM metrics
