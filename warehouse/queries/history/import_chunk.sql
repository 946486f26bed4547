-- Append one chunk of a history import (registered frames import_chunk_offers: the OfferItem fields,
-- `extra` as JSON text in extra_json, and the run's day; import_chunk_refused) to the staging tables
-- of history/import_staging.sql. The whole item's JSON (item_json: what stage_imported reads `extra`
-- and the optional fields from, and the run's content id hashes) is written here, in one pass.
INSERT INTO import_offer_rows BY NAME
SELECT
    CAST(platform AS VARCHAR) AS platform, CAST(day AS VARCHAR) AS day,
    json_merge_patch(
        to_json(o), json_object('extra', json(o.extra_json), 'extra_json', NULL, 'day', NULL)
    ) AS item_json,
    CAST(offer_id AS VARCHAR) AS offer_id, CAST(region AS VARCHAR) AS region,
    CAST(gpu_name_raw AS VARCHAR) AS gpu_name_raw, CAST(gpu_model AS VARCHAR) AS gpu_model,
    CAST(gpu_form AS VARCHAR) AS gpu_form, CAST(gpu_memory_gb AS VARCHAR) AS gpu_memory_gb,
    CAST(gpu_count AS VARCHAR) AS gpu_count, CAST(price_amount AS VARCHAR) AS price_amount,
    CAST(price_currency AS VARCHAR) AS price_currency, CAST(price_per AS VARCHAR) AS price_per,
    CAST(billing_period AS VARCHAR) AS billing_period, CAST(min_term_periods AS VARCHAR) AS min_term_periods,
    CAST(pricing_type AS VARCHAR) AS pricing_type, CAST(available_gpus AS VARCHAR) AS available_gpus,
    CAST(source_url AS VARCHAR) AS source_url, CAST(observed_at AS VARCHAR) AS observed_at
FROM import_chunk_offers AS o;
INSERT INTO import_refused_rows BY NAME
SELECT
    CAST(platform AS VARCHAR) AS platform, CAST(day AS VARCHAR) AS day,
    CAST(raw AS VARCHAR) AS raw, CAST(reason AS VARCHAR) AS reason
FROM import_chunk_refused;
