-- Append the priced, valid records of one crawl or one history import (temp view load_priced) to
-- offers. hourly_rentable: only an offer billed by the hour can be rented for an hour; day, week
-- and month offers keep their per-GPU-hour price for comparison but are never hourly. crawl_id,
-- source and run_day (run_day_of the run, as daily_runs.day) come staged with each record.
--
-- First, the same rows raise the cheapest price seen per GPU model (gpu_price_seen, migration 080:
-- the reference of the price-history floor), in the same transaction: the references this load was
-- judged by were fixed before (load_price_references), so the order does not change any verdict.
INSERT INTO gpu_price_seen
SELECT gpu_model, min(price_usd_per_gpu_hour), count(*)
FROM load_priced
WHERE reason IS NULL
  AND gpu_model IS NOT NULL
  AND price_usd_per_gpu_hour IS NOT NULL
  AND offer_price_problem(price_usd_per_gpu_hour) IS NULL
GROUP BY gpu_model
ON CONFLICT (gpu_model) DO UPDATE SET
    cheapest_usd_per_gpu_hour = least(cheapest_usd_per_gpu_hour, excluded.cheapest_usd_per_gpu_hour),
    offers = offers + excluded.offers;

INSERT INTO offers (
    crawl_id, platform, source, offer_id, region, gpu_name_raw, gpu_model, gpu_form,
    gpu_memory_gb, gpu_count, price_amount, price_currency, price_per, billing_period,
    min_term_periods, pricing_type, hourly_rentable, price_usd_per_gpu_hour,
    price_cny_per_gpu_hour, fx_date, fx_source, available_gpus, source_url, observed_at,
    observed_date, extra, run_day
)
SELECT
    crawl_id, platform, source, offer_id, region, gpu_name_raw, gpu_model, gpu_form,
    gpu_memory_gb, gpu_count, price_amount, price_currency, price_per, billing_period,
    min_term_periods, pricing_type, billing_period = 'hour', price_usd_per_gpu_hour,
    price_cny_per_gpu_hour, fx_date, fx_source, available_gpus, source_url, observed_at,
    observed_date, extra, run_day
FROM load_priced
WHERE reason IS NULL
