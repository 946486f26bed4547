-- The day's offers under the price floor (judged_offers), spot ones included, in the
-- columns of checks/price_outliers.sql so the offers check lists both together.
-- Params: $plan_date.
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
            100 * floor_share, reference_offers
        )
        ELSE printf(
            'under %.0f%% of the median of the platform''s %d other offers of this GPU: a placeholder? '
            'left out of plans',
            100 * floor_share, reference_offers
        )
    END AS reason
FROM judged_offers(CAST($plan_date AS DATE), CAST($plan_date AS DATE))
WHERE below_price_floor
ORDER BY gpu_model, price_usd_per_gpu_hour, platform, offer_id
