-- The day's offers whose price per GPU-hour is not believable: outside [$min_usd, $max_usd] USD, or
-- more than $factor times away from the median of the same GPU model across the day's offers.
-- Such a price is nearly always a unit mistake (cents, 1/1000 CNY, a monthly price read as hourly).
WITH day_offers AS (
    SELECT o.platform, o.offer_id, o.gpu_model, o.pricing_type, o.price_amount, o.price_currency,
           o.billing_period, o.price_usd_per_gpu_hour
    FROM offers AS o
    JOIN plan_crawls AS c ON c.crawl_id = o.crawl_id AND c.platform = o.platform
    WHERE c.plan_date = $plan_date
      AND c.status IN ('ok', 'partial')  -- a failed crawl's stray items are history, not offers
      AND o.gpu_model IS NOT NULL
      AND o.price_usd_per_gpu_hour IS NOT NULL
),
medians AS (
    SELECT gpu_model, median(price_usd_per_gpu_hour) AS median_usd_per_gpu_hour, count(*) AS offers
    FROM day_offers
    GROUP BY gpu_model
)
SELECT
    d.platform,
    d.offer_id,
    d.gpu_model,
    d.pricing_type,
    d.price_amount,
    d.price_currency,
    d.billing_period,
    d.price_usd_per_gpu_hour,
    m.median_usd_per_gpu_hour,
    CASE
        WHEN d.price_usd_per_gpu_hour < $min_usd THEN 'below absolute floor'
        WHEN d.price_usd_per_gpu_hour > $max_usd THEN 'above absolute ceiling'
        WHEN d.price_usd_per_gpu_hour < m.median_usd_per_gpu_hour / $factor THEN 'far below the GPU median'
        ELSE 'far above the GPU median'
    END AS reason
FROM day_offers AS d
JOIN medians AS m USING (gpu_model)
WHERE d.price_usd_per_gpu_hour < $min_usd
   OR d.price_usd_per_gpu_hour > $max_usd
   OR d.price_usd_per_gpu_hour < m.median_usd_per_gpu_hour / $factor
   OR d.price_usd_per_gpu_hour > m.median_usd_per_gpu_hour * $factor
ORDER BY d.gpu_model, d.price_usd_per_gpu_hour
