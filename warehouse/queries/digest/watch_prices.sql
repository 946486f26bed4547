-- What a price watch compares with its threshold: per day of $days, the cheapest plannable offer of
-- $gpu_model (judged_offers: not spot, not under the price floor, as the plans read offers), on
-- $platforms (NULL: every platform), by USD and by CNY per GPU-hour, and where it is.
SELECT
    day,
    min(price_usd_per_gpu_hour) AS min_usd_per_gpu_hour,
    arg_min(platform, price_usd_per_gpu_hour) AS usd_platform,
    min(price_cny_per_gpu_hour) AS min_cny_per_gpu_hour,
    arg_min(platform, price_cny_per_gpu_hour) AS cny_platform
FROM judged_offers(
    list_min(CAST($days AS DATE[])), list_max(CAST($days AS DATE[])), gpu := CAST($gpu_model AS VARCHAR)
)
WHERE plannable
  AND list_contains(CAST($days AS DATE[]), day)
  AND ($platforms IS NULL OR list_contains(CAST($platforms AS VARCHAR[]), platform))
GROUP BY day
ORDER BY day
