-- Record the offers $plan_date's plans leave out as implausibly cheap (judged_offers):
-- the ones that are not spot (spot offers are left out of plans anyway).
-- Params: $plan_date, $computed_at.
INSERT INTO plan_excluded_offers BY NAME
SELECT
    CAST($plan_date AS DATE) AS plan_date,
    platform,
    crawl_id,
    offer_id,
    region,
    gpu_model,
    gpu_count,
    pricing_type,
    price_usd_per_gpu_hour,
    price_reference,
    reference_usd_per_gpu_hour,
    reference_offers,
    floor_share,
    CAST($computed_at AS TIMESTAMP) AS computed_at
FROM judged_offers(CAST($plan_date AS DATE), CAST($plan_date AS DATE))
WHERE below_price_floor AND NOT spot
