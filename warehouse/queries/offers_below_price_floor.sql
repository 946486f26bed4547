-- The day's offers that plans leave out as implausibly cheap (plan_offers, migration 013), in the
-- columns of offer_price_outliers.sql so the offers check lists both together.
-- Params: $plan_date, $floor_share, $own_floor_share, $min_other_platforms.
SELECT
    platform,
    offer_id,
    gpu_model,
    pricing_type,
    price_amount,
    price_currency,
    billing_period,
    price_usd_per_gpu_hour,
    reference_usd_per_gpu_hour AS median_usd_per_gpu_hour,
    CASE price_reference
        WHEN 'other_platforms' THEN printf(
            'under %.0f%% of the median of %d other platforms: a placeholder? left out of plans',
            100 * $floor_share, reference_offers
        )
        ELSE printf(
            'under %.0f%% of the median of the platform''s %d other offers of this GPU: a placeholder? '
            'left out of plans',
            100 * $own_floor_share, reference_offers
        )
    END AS reason
FROM plan_offers(CAST($plan_date AS DATE), $floor_share, $own_floor_share, $min_other_platforms)
WHERE below_price_floor
ORDER BY gpu_model, price_usd_per_gpu_hour, platform, offer_id
