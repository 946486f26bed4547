-- Price the offers of a history import in bulk (registered frame import_offers: every run of one
-- file at once) into the temp table history_priced: per GPU, per hour, in USD and CNY with the ECB
-- rate of the observation date or the nearest earlier one (fx_day_rates.sql, run first on the
-- view of history_fx_days.sql), and why a row is rejected (NULL = it
-- loads). The crawl loader's rules (load_price_staged.sql), applied per run instead of per crawl:
-- per GPU-hour by the shared macro price_per_gpu_hour (migration 032); a duplicate (offer_id,
-- pricing_type) within one run keeps its first row; above 1000 USD per GPU-hour a price is a unit
-- mistake (an 8x B200 node lists at about 50-60 USD/h). Runs already in crawl_runs are skipped.
CREATE OR REPLACE TEMP TABLE history_priced AS
WITH fresh AS (
    SELECT
        o.* EXCLUDE (observed_at),
        CAST(timezone('UTC', CAST(o.observed_at AS TIMESTAMPTZ)) AS TIMESTAMP) AS observed_at,
        CAST(timezone('UTC', CAST(o.observed_at AS TIMESTAMPTZ)) AS DATE) AS observed_date,
        row_number() OVER (PARTITION BY o.crawl_id, o.offer_id, o.pricing_type ORDER BY o.row_no) > 1
            AS repeated
    FROM import_offers AS o
    ANTI JOIN crawl_runs AS r ON r.crawl_id = o.crawl_id
),
priced AS (
    SELECT
        f.*,
        price_per_gpu_hour(f.price_amount, f.price_per, f.gpu_count, f.billing_period)
            / d.units_per_usd AS price_usd_per_gpu_hour,
        d.cny_per_usd,
        d.fx_date,
        d.fx_source
    FROM fresh AS f
    LEFT JOIN fx_day_rates AS d ON d.observed_date = f.observed_date AND d.price_currency = f.price_currency
)
SELECT
    * EXCLUDE (cny_per_usd, repeated),
    price_usd_per_gpu_hour * cny_per_usd AS price_cny_per_gpu_hour,
    CASE
        WHEN price_usd_per_gpu_hour IS NULL OR cny_per_usd IS NULL
            THEN 'no FX rate for ' || price_currency || ' on or before ' || observed_date
        WHEN repeated
            THEN 'duplicate offer_id and pricing_type in this run (the first one loaded)'
        WHEN price_usd_per_gpu_hour > 1000
            THEN 'absurd price: ' || round(price_usd_per_gpu_hour, 2) || ' USD per GPU-hour (limit 1000)'
    END AS reason
FROM priced
