-- Price per GPU-hour of one GPU model over time: per day, the cheapest and the median offer (USD),
-- from the run that stands for each platform that day (judged_offers). Offers under
-- the price floor (placeholders) or judged implausible by the history rule are left out, as the
-- plans leave them out, and so are fractional offers (priced per share of a card).
-- Params: $gpu_model; $since, $until (DATE, inclusive); $platform, $pricing_type, $gpu_count
-- (NULL = any: all platforms, on-demand and spot, any GPUs per offer).
SELECT
    day,
    min(price_usd_per_gpu_hour) AS min_usd_per_gpu_hour,
    median(price_usd_per_gpu_hour) AS median_usd_per_gpu_hour,
    arg_min(platform, price_usd_per_gpu_hour) AS cheapest_platform,
    count(*) AS offers,
    count(DISTINCT platform) AS platforms,
    string_agg(DISTINCT source, ', ' ORDER BY source) AS sources
FROM judged_offers(CAST($since AS DATE), CAST($until AS DATE), gpu := $gpu_model)
WHERE NOT below_price_floor
  AND NOT implausible
  AND NOT fractional
  AND ($platform IS NULL OR platform = $platform)
  AND ($pricing_type IS NULL OR pricing_type = $pricing_type)
  AND ($gpu_count IS NULL OR gpu_count = $gpu_count)
GROUP BY day
ORDER BY day
