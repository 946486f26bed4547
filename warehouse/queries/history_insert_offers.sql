-- Append the valid priced rows of a history import (temp table history_priced) to offers.
-- run_day: daily_runs.day of the row's run (migration 031), from the values history_record_runs.sql
-- records: started_at = the run's day (registered frame import_runs), loaded_at = $loaded_at.
INSERT INTO offers (
    crawl_id, platform, source, offer_id, region, gpu_name_raw, gpu_model, gpu_form,
    gpu_memory_gb, gpu_count, price_amount, price_currency, price_per, billing_period,
    min_term_periods, pricing_type, hourly_rentable, price_usd_per_gpu_hour,
    price_cny_per_gpu_hour, fx_date, fx_source, available_gpus, source_url, observed_at,
    observed_date, extra, run_day
)
SELECT
    p.crawl_id, p.platform, $source, offer_id, region, gpu_name_raw, gpu_model, gpu_form,
    gpu_memory_gb, gpu_count, price_amount, price_currency, price_per, billing_period,
    min_term_periods, pricing_type, billing_period = 'hour', price_usd_per_gpu_hour,
    price_cny_per_gpu_hour, fx_date, fx_source, available_gpus, source_url, observed_at,
    observed_date, json_extract(item_json, '$.extra'),
    CAST(coalesce(CAST(r.day AS TIMESTAMP), $loaded_at) AS DATE)
FROM history_priced AS p
JOIN import_runs AS r USING (crawl_id)
WHERE reason IS NULL
ORDER BY row_no
