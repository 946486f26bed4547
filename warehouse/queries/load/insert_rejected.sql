-- Keep every rejected record of one crawl or one history import with the reason (temp table
-- load_rejected, load/price_staged.sql), under its run. `raw` is the
-- record's fields as read (text) when it failed validation, else the typed record as JSON;
-- unparsed lines come verbatim from load_unparsed_lines.
INSERT INTO rejected_offers (crawl_id, platform, raw, reason, rejected_at)
SELECT
    crawl_id,
    platform,
    coalesce(raw, json_merge_patch('{}', to_json(struct_pack(
        platform, offer_id, region, gpu_name_raw, gpu_model, gpu_form, gpu_memory_gb, gpu_count,
        price_amount, price_currency, price_per, billing_period, min_term_periods, pricing_type,
        available_gpus, source_url, observed_at, extra, gpu_frac, machine_id, gpu_ids, catalog,
        catalog_date, pool_id
    )))),
    reason,
    $rejected_at
FROM load_rejected
