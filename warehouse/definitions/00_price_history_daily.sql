-- For people (`gpuplan sql`): per day (observed_date, UTC) and canonical GPU model, the lowest and
-- median price per GPU-hour in USD and CNY, how many offers, how many GPUs they say are available, and
-- on how many platforms. An offer seen several times in a day (re-runs) counts once, with its last
-- observation of the day. gpus_available sums the offers that state their stock (unknown is not
-- zero: NULL when no offer that day says); offers_with_stock says how many did.
-- Offers of every pricing type count (on-demand, spot, plans), placeholders under the price floor
-- too: filter `offers` for one type. Trends and the digest read judged_offers instead.
CREATE OR REPLACE VIEW price_history_daily AS
WITH daily_offers AS (
    SELECT
        observed_date,
        gpu_model,
        platform,
        offer_id,
        pricing_type,
        arg_max(price_usd_per_gpu_hour, observed_at) AS price_usd_per_gpu_hour,
        arg_max(price_cny_per_gpu_hour, observed_at) AS price_cny_per_gpu_hour,
        arg_max_null(available_gpus, observed_at) AS available_gpus
    FROM offers
    WHERE gpu_model IS NOT NULL
    GROUP BY observed_date, gpu_model, platform, offer_id, pricing_type
)
SELECT
    observed_date,
    gpu_model,
    min(price_usd_per_gpu_hour) AS min_usd_per_gpu_hour,
    median(price_usd_per_gpu_hour) AS median_usd_per_gpu_hour,
    min(price_cny_per_gpu_hour) AS min_cny_per_gpu_hour,
    median(price_cny_per_gpu_hour) AS median_cny_per_gpu_hour,
    count(*) AS offers,
    sum(available_gpus) AS gpus_available,
    count(available_gpus) AS offers_with_stock,
    count(DISTINCT platform) AS platforms
FROM daily_offers
GROUP BY observed_date, gpu_model;
