-- The GPU models whose median on-demand price per GPU-hour in the crawl behind $plan_date's offers
-- of $platform is more than $factor times above or below their median over the platform's last
-- $history good crawls before it (which crawls: the drift_crawls macro). A move that
-- large in a day is a unit or parsing change (cents read as dollars, a per-unit price read per GPU).
WITH priced AS (
    SELECT k.is_today, o.gpu_model, o.price_usd_per_gpu_hour
    FROM offers AS o
    -- by run day too: crawl_id alone prunes no row group of offers
    JOIN drift_crawls($platform, $plan_date, $history) AS k ON k.crawl_id = o.crawl_id AND k.run_day = o.run_day
    WHERE o.gpu_model IS NOT NULL
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
