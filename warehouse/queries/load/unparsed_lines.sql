-- The lines of a feed that are not JSON objects with offer fields (a truncated last line, a
-- stray array...), verbatim, into rejected_offers. Run only when load_staged found such lines:
-- it reads the feed again as plain text lines (a control character as the column delimiter,
-- so a line never splits) and checks them with the same JSON parser as read_json. Lines that
-- are not even UTF-8 text go to the temp table load_unreadable_lines (DuckDB's rejects table),
-- which load/unreadable_lines.sql adds. The field list is load_stage_feed's.
INSERT INTO rejected_offers (crawl_id, platform, raw, reason, rejected_at)
WITH lines AS (
    SELECT line, try(json_transform(line, '{
        "platform": "VARCHAR", "offer_id": "VARCHAR", "region": "VARCHAR",
        "gpu_name_raw": "VARCHAR", "gpu_model": "VARCHAR", "gpu_form": "VARCHAR",
        "gpu_memory_gb": "VARCHAR", "gpu_count": "VARCHAR", "price_amount": "VARCHAR",
        "price_currency": "VARCHAR", "price_per": "VARCHAR", "billing_period": "VARCHAR",
        "min_term_periods": "VARCHAR", "pricing_type": "VARCHAR", "available_gpus": "VARCHAR",
        "source_url": "VARCHAR", "observed_at": "VARCHAR", "extra": "JSON",
        "gpu_frac": "VARCHAR", "machine_id": "VARCHAR", "gpu_ids": "JSON", "catalog": "VARCHAR",
        "catalog_date": "VARCHAR", "pool_id": "VARCHAR"
    }')) AS item
    FROM read_csv(
        $feed,
        columns = {'line': 'VARCHAR'},
        delim = $delimiter, quote = '', escape = '', header = false,
        auto_detect = false, strict_mode = false,
        max_line_size = 16777216,  -- 16 MB: far past any offer line, bounded buffers
        ignore_errors = true, store_rejects = true,
        rejects_table = 'load_unreadable_lines', rejects_scan = 'load_unreadable_scans'
    )
    WHERE trim(line) <> ''
)
SELECT
    $crawl_id,
    $platform,
    line,
    CASE
        WHEN NOT json_valid(line) THEN 'malformed JSON'
        WHEN json_type(line) <> 'OBJECT' THEN 'not a JSON object'
        ELSE 'no offer fields'
    END,
    $rejected_at
FROM lines
WHERE item IS NULL
   OR coalesce(
        item.platform, item.offer_id, item.region, item.gpu_name_raw, item.gpu_model,
        item.gpu_form, item.gpu_memory_gb, item.gpu_count, item.price_amount,
        item.price_currency, item.price_per, item.billing_period, item.min_term_periods,
        item.pricing_type, item.available_gpus, item.source_url, item.observed_at,
        CAST(item.extra AS VARCHAR), item.gpu_frac, item.machine_id, CAST(item.gpu_ids AS VARCHAR),
        item.catalog, item.catalog_date, item.pool_id
    ) IS NULL
