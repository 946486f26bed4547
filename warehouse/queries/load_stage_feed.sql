-- Stage one crawl feed (JSONL, one scrapers.items.OfferItem per line) in the temp table
-- load_staged: one row per record (in no particular order: the load runs without
-- preserve_insertion_order, which lets both cores build the table), every field as the text it
-- was (`item`) and typed with TRY_CAST. This file is the statement's first part, the CTE
-- `typed`; loading.py appends load_check_staged.sql, the checks every offer passes, crawled or
-- imported (history_stage_imported.sql is the other first part): one rule set for every offer.
--
-- read_json parses each line once with every field as text (numbers keep their digits).
-- ignore_errors turns a malformed or non-object line into a row of NULLs (`unparsed`): its
-- verbatim text comes from load_unparsed_lines.
-- Params: $feed; $crawl_id, $source of the crawl; $started_at (its summary's, UTC, may be NULL) and
-- $loaded_at, whose run_day_of (migration 085) is offers.run_day.
CREATE OR REPLACE TEMP TABLE load_staged AS
WITH typed AS (
    SELECT
        CAST($crawl_id AS VARCHAR) AS crawl_id,
        CAST($source AS VARCHAR) AS source,
        run_day_of(CAST($started_at AS TIMESTAMP), CAST($loaded_at AS TIMESTAMP)) AS run_day,
        item,
        coalesce(
            item.platform, item.offer_id, item.region, item.gpu_name_raw, item.gpu_model,
            item.gpu_form, item.gpu_memory_gb, item.gpu_count, item.price_amount,
            item.price_currency, item.price_per, item.billing_period, item.min_term_periods,
            item.pricing_type, item.available_gpus, item.source_url, item.observed_at,
            CAST(item.extra AS VARCHAR)
        ) IS NULL AS unparsed,
        nullif(item.platform, '') AS item_platform,
        nullif(item.offer_id, '') AS offer_id,
        item.region AS region,
        nullif(item.gpu_name_raw, '') AS gpu_name_raw,
        nullif(item.gpu_model, '') AS gpu_model,
        nullif(item.gpu_form, '') AS gpu_form,
        TRY_CAST(item.gpu_memory_gb AS DOUBLE) AS gpu_memory_gb,
        TRY_CAST(item.gpu_count AS DOUBLE) AS gpu_count,
        TRY_CAST(item.price_amount AS DOUBLE) AS price_amount,
        nullif(item.price_currency, '') AS price_currency,
        nullif(item.price_per, '') AS price_per,
        nullif(item.billing_period, '') AS billing_period,
        TRY_CAST(item.min_term_periods AS DOUBLE) AS min_term_periods,
        nullif(item.pricing_type, '') AS pricing_type,
        TRY_CAST(item.available_gpus AS DOUBLE) AS available_gpus,
        item.source_url AS source_url,
        -- ISO-8601 with Z or an offset; a timestamp without a zone is UTC (the session zone)
        TRY_CAST(item.observed_at AS TIMESTAMPTZ) AS observed_at_tz,
        item.extra AS extra
    FROM read_json(
        $feed,
        format = 'newline_delimited',
        ignore_errors = true,
        columns = {
            'platform': 'VARCHAR', 'offer_id': 'VARCHAR', 'region': 'VARCHAR',
            'gpu_name_raw': 'VARCHAR', 'gpu_model': 'VARCHAR', 'gpu_form': 'VARCHAR',
            'gpu_memory_gb': 'VARCHAR', 'gpu_count': 'VARCHAR', 'price_amount': 'VARCHAR',
            'price_currency': 'VARCHAR', 'price_per': 'VARCHAR', 'billing_period': 'VARCHAR',
            'min_term_periods': 'VARCHAR', 'pricing_type': 'VARCHAR', 'available_gpus': 'VARCHAR',
            'source_url': 'VARCHAR', 'observed_at': 'VARCHAR', 'extra': 'JSON'
        }
    ) AS item
),
