-- For people (`gpuplan sql`): per day (observed_date, UTC) and canonical GPU model, the lowest and
-- median price per GPU-hour in USD and CNY, how many offers, how many GPUs are free, and on how many
-- platforms. An offer seen several times in a day (re-runs) counts once, with its last observation
-- of the day (of two at the same instant, the later crawl_id's: the figures never depend on load
-- order). gpus_available counts each unit of stock once (free_gpus, 00_free_gpus.sql: a machine
-- listed whole and in slices, or on demand and at a spot bid, is one machine; a platform's pod sizes
-- of one stock count are one pool), over the
-- offers that state their stock (unknown is not zero: NULL when no offer that day says);
-- offers_with_stock says how many offers did.
-- Offers of every pricing type count (on-demand, spot, plans), placeholders under the price floor
-- too: filter `offers` for one type. Fractional offers (gpu_frac: a share of one card, priced per
-- share) are left out: their price is not a card's, their stock no card. Trends and the digest read
-- judged_offers instead.
--
-- price_history_between(first_day, last_day) is the same for the days from first_day to last_day
-- (both included): it reads only those days' offers, where a filter on the view would aggregate the
-- whole history first (its offers are read twice, for prices and for stock, so DuckDB materializes
-- them before any filter applies). The open dataset's export of one day reads it.
CREATE OR REPLACE MACRO price_history_between(first_day, last_day) AS TABLE
WITH daily_offers AS (
    SELECT
        observed_date,
        observed_date AS scope,
        gpu_model,
        platform,
        offer_id,
        pricing_type,
        arg_max(price_usd_per_gpu_hour, (observed_at, crawl_id)) AS price_usd_per_gpu_hour,
        arg_max(price_cny_per_gpu_hour, (observed_at, crawl_id)) AS price_cny_per_gpu_hour,
        arg_max_null(available_gpus, (observed_at, crawl_id)) AS available_gpus,
        arg_max_null(machine_id, (observed_at, crawl_id)) AS machine_id,
        arg_max_null(pool_id, (observed_at, crawl_id)) AS pool_id,
        arg_max_null(gpu_ids, (observed_at, crawl_id)) AS gpu_ids,
        CAST(NULL AS DOUBLE) AS gpu_frac
    FROM offers
    WHERE gpu_model IS NOT NULL
      AND gpu_frac IS NULL
      AND observed_date BETWEEN first_day AND last_day
    GROUP BY observed_date, gpu_model, platform, offer_id, pricing_type
),
stock AS (
    SELECT scope AS observed_date, gpu_model, sum(free_gpus) AS gpus_available
    FROM free_gpus('daily_offers')
    GROUP BY ALL
)
SELECT
    d.observed_date,
    d.gpu_model,
    min(d.price_usd_per_gpu_hour) AS min_usd_per_gpu_hour,
    median(d.price_usd_per_gpu_hour) AS median_usd_per_gpu_hour,
    min(d.price_cny_per_gpu_hour) AS min_cny_per_gpu_hour,
    median(d.price_cny_per_gpu_hour) AS median_cny_per_gpu_hour,
    count(*) AS offers,
    any_value(s.gpus_available) AS gpus_available,
    count(d.available_gpus) AS offers_with_stock,
    count(DISTINCT d.platform) AS platforms
FROM daily_offers AS d
LEFT JOIN stock AS s USING (observed_date, gpu_model)
GROUP BY d.observed_date, d.gpu_model;

CREATE OR REPLACE VIEW price_history_daily AS
SELECT * FROM price_history_between(DATE '0001-01-01', DATE '9999-12-31');
