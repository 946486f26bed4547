-- The cheapest plannable offer of each GPU model now, for `gpuplan gpus`: each platform's latest
-- usable crawl (judged_offers with latest := TRUE, the one rule for "the day's offers"). Spot offers
-- and placeholder prices (below the price floor) are not plannable, so they are not the cheapest.
-- run_day says how old the cheapest offer's crawl is.
SELECT
    gpu_model,
    min(price_usd_per_gpu_hour) AS min_usd_per_gpu_hour,
    arg_min(platform, price_usd_per_gpu_hour) AS cheapest_platform,
    arg_min(run_day, price_usd_per_gpu_hour) AS cheapest_run_day,
    count(DISTINCT platform) AS platforms,
    count(*) AS offers
FROM judged_offers(CAST(NULL AS DATE), CAST(NULL AS DATE), latest := TRUE)
WHERE plannable
GROUP BY gpu_model
ORDER BY gpu_model
