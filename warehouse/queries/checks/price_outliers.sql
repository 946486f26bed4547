-- The day's offers whose price per GPU-hour is not believable: outside the plausible range
-- (min_usd_per_gpu_hour()..max_usd_per_gpu_hour(): loaders reject such prices, so
-- only offers loaded before that rule show here), or more than $factor times away from the median
-- of the same GPU model across the day's offers (judged_offers). Such a price is
-- nearly always a unit mistake (cents, 1/1000 CNY, a monthly price read as hourly). Offers the
-- history rule judged implausible are listed by plans/offers_below_price_floor.sql instead, and
-- fractional offers (a share of a card, priced per share) have no card's price to compare.
WITH day_offers AS (
    SELECT platform, offer_id, gpu_model, pricing_type, price_amount, price_currency, billing_period,
           price_usd_per_gpu_hour
    FROM judged_offers(CAST($plan_date AS DATE), CAST($plan_date AS DATE))
    WHERE NOT implausible AND NOT fractional
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
        WHEN d.price_usd_per_gpu_hour < min_usd_per_gpu_hour() THEN 'below absolute floor'
        WHEN d.price_usd_per_gpu_hour > max_usd_per_gpu_hour() THEN 'above absolute ceiling'
        WHEN d.price_usd_per_gpu_hour < m.median_usd_per_gpu_hour / $factor THEN 'far below the GPU median'
        ELSE 'far above the GPU median'
    END AS reason
FROM day_offers AS d
JOIN medians AS m USING (gpu_model)
WHERE d.price_usd_per_gpu_hour < min_usd_per_gpu_hour()
   OR d.price_usd_per_gpu_hour > max_usd_per_gpu_hour()
   OR d.price_usd_per_gpu_hour < m.median_usd_per_gpu_hour / $factor
   OR d.price_usd_per_gpu_hour > m.median_usd_per_gpu_hour * $factor
ORDER BY d.gpu_model, d.price_usd_per_gpu_hour
