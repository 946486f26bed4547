-- The cheapest plannable offer of each GPU model now, for `gpuplan gpus`: each platform's latest
-- usable crawl (judged_offers with latest := TRUE, the one rule for "the day's offers"). Spot offers
-- and placeholder prices (below the price floor) are not plannable, so they are not the cheapest.
-- run_day and crawled_at say how old the cheapest offer's crawl is; stale, that it stands for a
-- later failed crawl (its stock unknown), within $max_stale_hours (GPUPLAN_STALE_HOURS). gpus_free: the GPUs of the model free in those
-- crawls, each unit of stock once (free_gpus: a machine, a pool); NULL when none of its offers says.
-- Of platforms tied at the cheapest price, the first by name: the answer never depends on load order.
WITH latest AS MATERIALIZED (
    SELECT * FROM judged_offers(
        CAST(NULL AS DATE), CAST(NULL AS DATE), latest := TRUE, max_stale_hours := $max_stale_hours
    )
),
priced AS (
    SELECT
        gpu_model,
        min(price_usd_per_gpu_hour) AS min_usd_per_gpu_hour,
        arg_min(platform, (price_usd_per_gpu_hour, platform)) AS cheapest_platform,
        arg_min(run_day, (price_usd_per_gpu_hour, platform)) AS cheapest_run_day,
        arg_min(crawled_at, (price_usd_per_gpu_hour, platform)) AS cheapest_crawled_at,
        arg_min(stale, (price_usd_per_gpu_hour, platform)) AS cheapest_stale,
        count(DISTINCT platform) AS platforms,
        count(*) AS offers
    FROM latest
    WHERE plannable
    GROUP BY gpu_model
),
counted AS (
    SELECT
        NULL AS scope, platform, gpu_model, offer_id, machine_id, pool_id, gpu_ids, gpu_frac, available_gpus
    FROM latest
    WHERE NOT below_price_floor
),
stock AS (
    SELECT gpu_model, sum(free_gpus) AS gpus_free
    FROM free_gpus('counted')
    GROUP BY gpu_model
)
SELECT p.*, s.gpus_free
FROM priced AS p
LEFT JOIN stock AS s USING (gpu_model)
ORDER BY gpu_model
