-- For people (`gpuplan sql`), the history's side of plan_excluded_offers: every stored offer the
-- history rule (00_price_window.sql) judges implausible, on any day, planned or not (an imported
-- day never planned included), with its reference and the reason. The verdict judged_offers gives
-- the same offer: one rule (price_references, history_price_problem), read the same way.
CREATE OR REPLACE VIEW implausible_offers AS
WITH keys AS (
    SELECT DISTINCT run_day, gpu_model, pricing_type, platform FROM price_reference_votes
),
refs AS (
    SELECT * FROM price_references('keys')
),
judged AS (
    SELECT
        o.crawl_id,
        o.platform,
        o.source,
        o.offer_id,
        o.gpu_model,
        o.pricing_type,
        o.run_day,
        o.observed_at,
        o.price_usd_per_gpu_hour,
        r.reference_source AS history_reference,
        r.reference_usd_per_gpu_hour AS history_reference_usd_per_gpu_hour,
        r.reference_platforms AS history_reference_platforms,
        history_price_problem(
            o.price_usd_per_gpu_hour, r.reference_usd_per_gpu_hour, r.reference_source, r.reference_platforms,
            o.pricing_type
        ) AS reason
    FROM offers AS o
    JOIN refs AS r USING (run_day, gpu_model, pricing_type, platform)
    WHERE o.gpu_frac IS NULL AND o.price_usd_per_gpu_hour > 0
)
SELECT * FROM judged WHERE reason IS NOT NULL;
