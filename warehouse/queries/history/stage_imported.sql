-- Stage the offers of a history import (registered frame import_offers: every run of one file at
-- once, OfferItem fields typed by the reader) in the temp table load_staged: in the shape
-- feed_records gives a crawl's records, then typed and checked by checked_offers and later priced by
-- load/price_staged.sql, as a crawl's are: crawled and imported offers pass one rule set
-- (definitions/00_offer_records.sql). Each field is also kept as text in `item`, as a crawl feed's
-- are. Runs already in crawl_runs are skipped. run_day: the day the file states for the run
-- (registered frame import_runs), as history/record_runs.sql records it in started_at.
-- Params: $source ('import:<format>').
CREATE OR REPLACE TEMP TABLE load_staged AS
WITH import_text AS (
    SELECT
        o.crawl_id,
        CAST(r.day AS DATE) AS run_day,
        struct_pack(
            platform := CAST(o.platform AS VARCHAR),
            offer_id := CAST(o.offer_id AS VARCHAR),
            region := CAST(o.region AS VARCHAR),
            gpu_name_raw := CAST(o.gpu_name_raw AS VARCHAR),
            gpu_model := CAST(o.gpu_model AS VARCHAR),
            gpu_form := CAST(o.gpu_form AS VARCHAR),
            -- a reader's missing number may arrive as a float NaN: that is no value
            gpu_memory_gb := nullif(lower(CAST(o.gpu_memory_gb AS VARCHAR)), 'nan'),
            gpu_count := nullif(lower(CAST(o.gpu_count AS VARCHAR)), 'nan'),
            price_amount := nullif(lower(CAST(o.price_amount AS VARCHAR)), 'nan'),
            price_currency := CAST(o.price_currency AS VARCHAR),
            price_per := CAST(o.price_per AS VARCHAR),
            billing_period := CAST(o.billing_period AS VARCHAR),
            min_term_periods := nullif(lower(CAST(o.min_term_periods AS VARCHAR)), 'nan'),
            pricing_type := CAST(o.pricing_type AS VARCHAR),
            available_gpus := nullif(lower(CAST(o.available_gpus AS VARCHAR)), 'nan'),
            source_url := CAST(o.source_url AS VARCHAR),
            observed_at := CAST(o.observed_at AS VARCHAR),
            extra := o.parsed[1],
            -- the contract's optional fields, from the whole item (a reader that sets none gives NULL)
            gpu_frac := o.optional[1],
            machine_id := o.optional[2],
            gpu_ids := o.parsed[2],
            catalog := o.optional[3],
            catalog_date := o.optional[4],
            pool_id := o.optional[5]
        ) AS item
    FROM (
        -- each item's JSON parsed twice (once per result type), not once per field
        SELECT
            *,
            json_extract(item_json, ['$.extra', '$.gpu_ids']) AS parsed,
            json_extract_string(
                item_json, ['$.gpu_frac', '$.machine_id', '$.catalog', '$.catalog_date', '$.pool_id']
            ) AS optional
        FROM import_offers
    ) AS o
    JOIN import_runs AS r USING (crawl_id)
    ANTI JOIN crawl_runs AS done ON done.crawl_id = o.crawl_id
),
records AS (
    SELECT crawl_id, CAST($source AS VARCHAR) AS source, run_day, item, FALSE AS unparsed
    FROM import_text
)
SELECT * FROM checked_offers('records', CAST(NULL AS VARCHAR));
