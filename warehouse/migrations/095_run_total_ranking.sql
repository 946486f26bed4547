-- The daily tables rank by what a run is billed. 'lowest_cost_per_btoken' ("tok": the least rent per
-- billion tokens at full use, a rate) recommended plans that cost several times more as billed than
-- the rent plan for the same run; it is replaced by 'lowest_run_total' ("run"): the least total for
-- one run of GPUPLAN_DEFAULT_TOKENS in whole billing periods and at least the minimum term
-- (cheapest_plans.total_usd), definitions/00_ranked_plans.sql.
--
-- Each best plan stores the measure its ranking ranks by, once, for every reader (the change
-- detector, plan_changes, the digest and its JSON):
--   measure      'commitment_usd' (lowest_rent: a month's rent, or the minimum term when longer) |
--                'total_usd' (lowest_run_total) | 'cost_usd_per_billion_tokens' (the retired
--                lowest_cost_per_btoken, on days planned before this migration)
--   measure_usd  its value; measure_cny the same in CNY
--
-- Stored history is kept as it was planned: days planned under the old ranking keep their
-- 'lowest_cost_per_btoken' rows (and their plan_changes), and the first day with 'lowest_run_total'
-- rows is where the new ranking starts. The change detector pairs a plan only with the same ranking
-- and the same measure, so the rename is never a plan change (backfill, the digest).
ALTER TABLE cheapest_plans ADD COLUMN measure VARCHAR;
ALTER TABLE cheapest_plans ADD COLUMN measure_usd DOUBLE;
ALTER TABLE cheapest_plans ADD COLUMN measure_cny DOUBLE;

UPDATE cheapest_plans
SET measure = CASE ranking
        WHEN 'lowest_rent' THEN 'commitment_usd'
        WHEN 'lowest_cost_per_btoken' THEN 'cost_usd_per_billion_tokens'
        ELSE 'total_usd'
    END,
    measure_usd = CASE ranking
        WHEN 'lowest_rent' THEN coalesce(commitment_usd, rent_usd_per_month)
        WHEN 'lowest_cost_per_btoken' THEN cost_usd_per_billion_tokens
        ELSE total_usd
    END,
    measure_cny = CASE ranking
        WHEN 'lowest_rent' THEN coalesce(commitment_cny, rent_cny_per_month)
        WHEN 'lowest_cost_per_btoken' THEN cost_cny_per_billion_tokens
        ELSE total_cny
    END;
