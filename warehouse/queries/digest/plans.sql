-- The cheapest plans of one day, every (model, method, ranking) row including 'no_offer_fits',
-- smallest model first, 'lowest_rent' before the other ranking.
SELECT
    model,
    method,
    ranking,
    status,
    platform,
    gpu_model,
    gpu_count,
    pricing_type,
    stock_known,
    stale,
    rent_usd_per_month,
    rent_cny_per_month,
    commitment_hours,
    -- the minimum term in months when it is longer than one month, else NULL
    CASE WHEN commitment_hours > hours_per_billing_period('month')
        THEN commitment_hours / hours_per_billing_period('month') END AS commitment_months,
    commitment_usd,
    commitment_cny,
    cost_usd_per_billion_tokens,
    cost_cny_per_billion_tokens,
    job_tokens,
    total_usd,
    total_cny
FROM cheapest_plans
WHERE plan_date = $plan_date
ORDER BY params NULLS LAST, model, method, ranking <> 'lowest_rent', ranking
