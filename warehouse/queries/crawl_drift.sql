-- How the crawl behind $plan_date's offers of $platform compares with the platform's own last
-- $history good crawls before it (status ok or partial, our crawls, offline only against offline):
-- offers loaded, the share of offers whose GPU name matched no catalog card, the share of quotes
-- rejected. One row; history_crawls = 0 when there is nothing to compare with (or no good crawl today).
WITH today AS (
    SELECT c.crawl_id, r.offline, r.offers_loaded, r.items_rejected
    FROM plan_crawls AS c
    JOIN crawl_runs AS r USING (crawl_id)
    WHERE c.platform = $platform
      AND c.plan_date = $plan_date
      AND r.status IN ('ok', 'partial')
      AND r.source = 'crawl'
),
earlier AS (
    -- a crawl can stand for several days (a platform not re-crawled): count it once
    SELECT c.crawl_id, max(c.plan_date) AS last_day
    FROM plan_crawls AS c
    JOIN crawl_runs AS r USING (crawl_id)
    WHERE c.platform = $platform
      AND c.plan_date < $plan_date
      AND r.status IN ('ok', 'partial')
      AND r.source = 'crawl'
      AND r.offline = (SELECT offline FROM today)
      AND c.crawl_id NOT IN (SELECT crawl_id FROM today)
    GROUP BY c.crawl_id
    ORDER BY last_day DESC
    LIMIT $history
),
crawls AS (
    SELECT crawl_id, TRUE AS is_today FROM today
    UNION ALL
    SELECT crawl_id, FALSE AS is_today FROM earlier
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
        SELECT crawl_id, avg(CASE WHEN gpu_model IS NULL THEN 1.0 ELSE 0.0 END) AS unknown_share
        FROM offers
        WHERE crawl_id IN (SELECT crawl_id FROM crawls)
        GROUP BY crawl_id
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
