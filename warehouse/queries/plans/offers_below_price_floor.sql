-- The day's offers its plans leave out as implausible (judged_offers): judged a mistake by the
-- history rule, or under the price floor (spot ones included), in the columns of
-- checks/price_outliers.sql so the offers check lists both together.
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
    CASE WHEN implausible THEN history_reference_usd_per_gpu_hour ELSE reference_usd_per_gpu_hour END
        AS median_usd_per_gpu_hour,
    CASE
        WHEN implausible THEN implausible_reason || ': left out of plans'
        ELSE price_floor_reason(price_reference, floor_share, reference_offers)
    END AS reason
FROM judged_offers(CAST($plan_date AS DATE), CAST($plan_date AS DATE))
WHERE implausible OR below_price_floor
ORDER BY gpu_model, price_usd_per_gpu_hour, platform, offer_id
