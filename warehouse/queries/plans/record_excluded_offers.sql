-- Record the offers $plan_date's plans leave out as implausible (judged_offers), with why: the ones
-- the history rule judges a mistake (every pricing type: spot too, since it is kept out of the
-- references as well), then the ones under the day's price floor that are not spot (spot offers are
-- left out of plans anyway). price_reference says which judged it: 'history_card' |
-- 'history_compute' (rule 3 of docs/plausibility.md) or 'other_platforms' | 'own_offers' (rule 4).
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
    CASE WHEN implausible THEN 'history_' || history_reference ELSE price_reference END AS price_reference,
    CASE WHEN implausible THEN history_reference_usd_per_gpu_hour ELSE reference_usd_per_gpu_hour END
        AS reference_usd_per_gpu_hour,
    CASE WHEN implausible THEN history_reference_platforms ELSE reference_offers END AS reference_offers,
    CASE WHEN implausible THEN history_price_share() ELSE floor_share END AS floor_share,
    CASE WHEN implausible THEN implausible_reason ELSE price_floor_reason(price_reference, floor_share, reference_offers) END
        AS reason,
    CAST($computed_at AS TIMESTAMP) AS computed_at
FROM judged_offers(CAST($plan_date AS DATE), CAST($plan_date AS DATE))
WHERE implausible OR (below_price_floor AND NOT spot)
