-- Offer records as the loaders read and check them: one rule set for every offer, crawled
-- (queries/load/stage_feed.sql) or imported (queries/history/import_*.sql).

-- The offer's fields, the one list of them in SQL (scrapers.items.OfferItem is the one in Python;
-- tests/warehouse/test_offer_contract.py holds the two equal, name for name; this order is the
-- order of a rejected record's `raw`): each field as a record holds it before checked_offers types
-- it, text as it was written (numbers keep their digits) but for the two JSON fields. read_json
-- reads a feed with these columns; the other statements derive what they need from it
-- (offer_record, offer_field_names).
CREATE OR REPLACE MACRO offer_fields() AS {
    'platform': 'VARCHAR', 'offer_id': 'VARCHAR', 'region': 'VARCHAR',
    'gpu_name_raw': 'VARCHAR', 'gpu_model': 'VARCHAR', 'gpu_form': 'VARCHAR',
    'gpu_memory_gb': 'VARCHAR', 'gpu_count': 'VARCHAR', 'price_amount': 'VARCHAR',
    'price_currency': 'VARCHAR', 'price_per': 'VARCHAR', 'billing_period': 'VARCHAR',
    'min_term_periods': 'VARCHAR', 'pricing_type': 'VARCHAR', 'available_gpus': 'VARCHAR',
    'source_url': 'VARCHAR', 'observed_at': 'VARCHAR', 'extra': 'JSON',
    'gpu_frac': 'VARCHAR', 'machine_id': 'VARCHAR', 'gpu_ids': 'JSON', 'catalog': 'VARCHAR',
    'catalog_date': 'VARCHAR', 'pool_id': 'VARCHAR'
};

-- The fields' names, in order.
CREATE OR REPLACE MACRO offer_field_names() AS json_keys(to_json(offer_fields()));

-- A record with every field NULL, of the type read_json gives a feed's record: a reader that builds
-- records in SQL (history/import_observations.sql) sets the fields it has (struct_update).
CREATE OR REPLACE MACRO offer_record() AS json_transform('{}', to_json(offer_fields()));

-- A crawl feed's records (JSONL, one scrapers.items.OfferItem per line), one row per record (in no
-- particular order: the load runs without preserve_insertion_order, which lets both cores build the
-- table), every field as the text it was (`item`), in the shape checked_offers reads: crawl_id,
-- source, run_day, item, unparsed. read_json parses each line once with every field as text (numbers
-- keep their digits). ignore_errors turns a malformed or non-object line into a row of NULLs
-- (`unparsed`): its verbatim text comes from queries/load/unparsed_lines.sql, which tells such lines
-- the same way.
-- Arguments: the feed's path; the crawl's crawl_id, source and run_day (run_day_of its summary).
CREATE OR REPLACE MACRO feed_records(feed, crawl_id, source, run_day) AS TABLE
SELECT
    CAST(crawl_id AS VARCHAR) AS crawl_id,
    CAST(source AS VARCHAR) AS source,
    CAST(run_day AS DATE) AS run_day,
    item,
    -- no field at all: every field NULL, as offer_record() has them
    item IS NOT DISTINCT FROM offer_record() AS unparsed
FROM read_json(feed, format = 'newline_delimited', ignore_errors = true, columns = offer_fields()) AS item;

-- The checks every offer passes, crawled or imported, over `records`: the name of a table or CTE
-- of records in the shape feed_records gives them (the import stages its own in that shape). Fields
-- typed (TRY_CAST: a value that is not a number stays NULL, for its reason) and `reason`, why the record is rejected (NULL = it loads; reasons that need FX or the whole
-- run come in queries/load/price_staged.sql). Values must be as OfferItem spells them (ISO currency
-- in capitals, price_per 'gpu', ...): nothing is trimmed or re-cased, so a variant is rejected with
-- its value in the reason rather than guessed at. `raw` keeps the record's fields as text for the
-- rejected ones. crawl_platform: the crawl's platform (the summary's); a record may omit it, not
-- contradict it. NULL for imports, whose records each name theirs. The price checks here are the
-- loader's copy of rule 1 of docs/plausibility.md (a price at all), before rules 2 and 3
-- (queries/load/price_staged.sql).
CREATE OR REPLACE MACRO checked_offers(records, crawl_platform) AS TABLE
WITH typed AS (
    SELECT
        crawl_id,
        source,
        run_day,
        item,
        unparsed,
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
        item.extra AS extra,
        TRY_CAST(item.gpu_frac AS DOUBLE) AS gpu_frac,
        nullif(item.machine_id, '') AS machine_id,
        -- a JSON array of whole numbers; anything else stays NULL, for its reason
        CASE WHEN json_type(item.gpu_ids) = 'ARRAY' THEN TRY_CAST(item.gpu_ids AS BIGINT[]) END AS gpu_ids,
        nullif(item.catalog, '') AS catalog,
        TRY_CAST(item.catalog_date AS DATE) AS catalog_date,
        nullif(item.pool_id, '') AS pool_id
    FROM query_table(records)
),
checked AS (
    SELECT
        *,
        CASE
            WHEN unparsed THEN 'not a JSON object with offer fields'
            WHEN offer_id IS NULL OR gpu_name_raw IS NULL OR item.gpu_count IS NULL
                OR item.price_amount IS NULL OR price_currency IS NULL OR price_per IS NULL
                OR billing_period IS NULL OR pricing_type IS NULL OR item.observed_at IS NULL
                THEN 'missing required field: ' || concat_ws(', ',
                    CASE WHEN offer_id IS NULL THEN 'offer_id' END,
                    CASE WHEN gpu_name_raw IS NULL THEN 'gpu_name_raw' END,
                    CASE WHEN item.gpu_count IS NULL THEN 'gpu_count' END,
                    CASE WHEN item.price_amount IS NULL THEN 'price_amount' END,
                    CASE WHEN price_currency IS NULL THEN 'price_currency' END,
                    CASE WHEN price_per IS NULL THEN 'price_per' END,
                    CASE WHEN billing_period IS NULL THEN 'billing_period' END,
                    CASE WHEN pricing_type IS NULL THEN 'pricing_type' END,
                    CASE WHEN item.observed_at IS NULL THEN 'observed_at' END)
            WHEN crawl_platform IS NOT NULL AND item_platform <> crawl_platform
                THEN 'platform ' || item_platform || ' in a crawl of ' || crawl_platform
            WHEN gpu_count IS NULL OR gpu_count <> floor(gpu_count) OR gpu_count <= 0
                OR gpu_count > 2147483647
                THEN 'gpu_count must be a whole number > 0, got ' || item.gpu_count
            WHEN price_amount IS NULL OR NOT isfinite(price_amount)
                THEN 'price_amount is not a number: ' || item.price_amount
            WHEN price_amount <= 0
                THEN 'price_amount must be > 0, got ' || item.price_amount
            WHEN price_per NOT IN ('gpu', 'instance')
                THEN 'price_per must be gpu or instance, got ' || price_per
            WHEN billing_period NOT IN ('hour', 'day', 'week', 'month', 'year')
                THEN 'billing_period must be hour, day, week, month or year, got ' || billing_period
            WHEN pricing_type NOT IN ('on_demand', 'spot', 'monthly_plan', 'weekly_plan', 'daily_plan', 'reserved')
                THEN 'unknown pricing_type ' || pricing_type
            WHEN observed_at_tz IS NULL
                THEN 'observed_at is not an ISO-8601 timestamp: ' || item.observed_at
            WHEN item.min_term_periods IS NOT NULL
                AND (min_term_periods IS NULL OR min_term_periods <> floor(min_term_periods)
                     OR min_term_periods < 1 OR min_term_periods > 2147483647)
                THEN 'min_term_periods must be a whole number >= 1, got ' || item.min_term_periods
            WHEN item.available_gpus IS NOT NULL
                AND (available_gpus IS NULL OR available_gpus <> floor(available_gpus)
                     OR available_gpus < 0 OR available_gpus > 2147483647)
                THEN 'available_gpus must be a whole number >= 0 or null, got ' || item.available_gpus
            WHEN item.gpu_memory_gb IS NOT NULL
                AND (gpu_memory_gb IS NULL OR NOT isfinite(gpu_memory_gb) OR gpu_memory_gb <= 0)
                THEN 'gpu_memory_gb must be a number > 0 or null, got ' || item.gpu_memory_gb
            WHEN item.gpu_frac IS NOT NULL
                AND (gpu_frac IS NULL OR NOT isfinite(gpu_frac) OR gpu_frac <= 0 OR gpu_frac >= 1)
                THEN 'gpu_frac must be a share of one card, 0 < x < 1, or null, got ' || item.gpu_frac
            WHEN item.gpu_ids IS NOT NULL AND json_type(item.gpu_ids) <> 'NULL'
                AND (gpu_ids IS NULL
                     OR len(list_filter(gpu_ids, lambda x: x IS NULL OR x < 0 OR x > 2147483647)) > 0)
                THEN 'gpu_ids must be a list of whole numbers >= 0 or null, got ' || CAST(item.gpu_ids AS VARCHAR)
            WHEN item.catalog_date IS NOT NULL AND catalog_date IS NULL
                THEN 'catalog_date must be a date (YYYY-MM-DD) or null, got ' || item.catalog_date
        END AS reason
    FROM typed
)
SELECT
    crawl_id,
    source,
    run_day,
    coalesce(crawl_platform, item_platform) AS platform,
    offer_id,
    region,
    gpu_name_raw,
    gpu_model,
    gpu_form,
    gpu_memory_gb,
    TRY_CAST(gpu_count AS INTEGER) AS gpu_count,
    price_amount,
    price_currency,
    price_per,
    billing_period,
    TRY_CAST(coalesce(min_term_periods, 1) AS INTEGER) AS min_term_periods,
    pricing_type,
    TRY_CAST(available_gpus AS INTEGER) AS available_gpus,
    source_url,
    -- UTC wall time. A TIMESTAMPTZ is microseconds since the epoch in UTC, so make_timestamp of
    -- them is timezone('UTC', ...) without its time-zone lookup (two per row cost ~0.25 CPU s of a
    -- 1M-offer load); +-infinity, which have no microseconds, take timezone() as before.
    CASE
        WHEN isfinite(observed_at_tz) THEN make_timestamp(epoch_us(observed_at_tz))
        ELSE timezone('UTC', observed_at_tz)
    END AS observed_at,
    CAST(CASE
        WHEN isfinite(observed_at_tz) THEN make_timestamp(epoch_us(observed_at_tz))
        ELSE timezone('UTC', observed_at_tz)
    END AS DATE) AS observed_date,
    extra,
    gpu_frac,
    machine_id,
    TRY_CAST(gpu_ids AS INTEGER[]) AS gpu_ids,
    catalog,
    catalog_date,
    pool_id,
    reason,
    unparsed,
    -- json_merge_patch onto {} drops the fields the record did not have (null)
    CASE WHEN reason IS NOT NULL AND NOT unparsed THEN json_merge_patch('{}', to_json(item)) END AS raw
FROM checked;
