-- Record the offers $plan_date's plans leave out as implausibly cheap (plan_offers, migration 013).
-- Params: $plan_date, $floor_share, $own_floor_share, $min_other_platforms, $computed_at.
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
    CASE price_reference WHEN 'other_platforms' THEN $floor_share ELSE $own_floor_share END AS floor_share,
    CAST($computed_at AS TIMESTAMP) AS computed_at
FROM plan_offers(CAST($plan_date AS DATE), $floor_share, $own_floor_share, $min_other_platforms)
WHERE below_price_floor
