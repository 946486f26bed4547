-- The offers $day's plans left out as implausible (plan_excluded_offers: under the price floor, the
-- prices_believable check's warning), per platform and GPU model: how many, the lowest price, and
-- the market price they were judged against, in USD and (at the offer's own rate) CNY per GPU-hour.
SELECT
    x.platform,
    x.gpu_model,
    CAST(count(*) AS INTEGER) AS offers,
    min(x.price_usd_per_gpu_hour) AS min_usd_per_gpu_hour,
    arg_min(o.price_cny_per_gpu_hour, x.price_usd_per_gpu_hour) AS min_cny_per_gpu_hour,
    median(x.reference_usd_per_gpu_hour) AS reference_usd_per_gpu_hour,
    median(x.reference_usd_per_gpu_hour * o.price_cny_per_gpu_hour / o.price_usd_per_gpu_hour)
        AS reference_cny_per_gpu_hour
FROM plan_excluded_offers AS x
LEFT JOIN offers AS o
  ON o.crawl_id = x.crawl_id AND o.platform = x.platform AND o.offer_id = x.offer_id
 AND o.pricing_type = x.pricing_type
WHERE x.plan_date = $day
GROUP BY x.platform, x.gpu_model
ORDER BY x.platform, x.gpu_model
