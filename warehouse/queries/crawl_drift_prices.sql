-- The GPU models whose median on-demand price per GPU-hour in the crawl behind $plan_date's offers
-- of $platform is more than $factor times above or below their median over the platform's last
-- $history good crawls before it (same rule for which crawls count as crawl_drift.sql). A move that
-- large in a day is a unit or parsing change (cents read as dollars, a per-unit price read per GPU).
WITH today AS (
    SELECT c.crawl_id, r.offline
    FROM plan_crawls AS c
    JOIN crawl_runs AS r USING (crawl_id)
    WHERE c.platform = $platform
      AND c.plan_date = $plan_date
      AND r.status IN ('ok', 'partial')
      AND r.source = 'crawl'
),
earlier AS (
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
priced AS (
    SELECT o.crawl_id IN (SELECT crawl_id FROM today) AS is_today, o.gpu_model, o.price_usd_per_gpu_hour
    FROM offers AS o
    WHERE o.crawl_id IN (SELECT crawl_id FROM today UNION ALL SELECT crawl_id FROM earlier)
      AND o.gpu_model IS NOT NULL
      AND o.pricing_type = 'on_demand'
      AND o.price_usd_per_gpu_hour > 0
),
medians AS (
    SELECT
        gpu_model,
        median(price_usd_per_gpu_hour) FILTER (WHERE is_today) AS today_usd_per_gpu_hour,
        median(price_usd_per_gpu_hour) FILTER (WHERE NOT is_today) AS usual_usd_per_gpu_hour
    FROM priced
    GROUP BY gpu_model
)
SELECT gpu_model, today_usd_per_gpu_hour, usual_usd_per_gpu_hour,
       today_usd_per_gpu_hour / usual_usd_per_gpu_hour AS ratio
FROM medians
WHERE today_usd_per_gpu_hour IS NOT NULL
  AND usual_usd_per_gpu_hour IS NOT NULL
  AND (today_usd_per_gpu_hour > usual_usd_per_gpu_hour * $factor
       OR today_usd_per_gpu_hour < usual_usd_per_gpu_hour / $factor)
ORDER BY gpu_model
