-- The daily rankings in one home: queries/plans/cheapest.sql stores them for a day, and `gpuplan plans
-- --gpu` asks the same question of one GPU model (its best plans: from the day's candidates, which
-- hold the best shape of every GPU model for each ranking).
-- For every (model, method) the day's plan_requirements ask, two rankings over plan_candidates, and
-- a 'no_offer_fits' row where nothing (on `gpu`, when given) fits rather than a missing row:
--   lowest_rent       the least paid for one month of training (the article's view): commitment_usd,
--                     a month's rent or the minimum term when that is longer
--   lowest_run_total  the least billed for one run of GPUPLAN_DEFAULT_TOKENS: total_usd, whole
--                     billing periods and at least the minimum term, with as many GPUs of an offer
--                     as is cheapest (the candidates hold each GPU model's cheapest run); ties go to
--                     the earlier finish
-- The rent per billion tokens at full use (cost_usd_per_billion_tokens) is a column, a rate, never
-- a ranking: it leaves out whole periods and minimum terms.
-- Each row stores its ranking's measure, what it ranks by: measure ('commitment_usd' | 'total_usd'),
-- measure_usd, measure_cny. The change detector, plan_changes and the digest read only these.
-- Ties then go to the cheaper other measure, then a known stock, then a stable order.
-- Columns: those of cheapest_plans but computed_at.
CREATE OR REPLACE MACRO ranked_plans(for_date, gpu := NULL) AS TABLE
WITH asked AS (
    SELECT DISTINCT model, model_preset, params, method
    FROM plan_requirements
    WHERE plan_date = for_date
),
rankings(ranking, measure) AS (
    VALUES ('lowest_rent', 'commitment_usd'), ('lowest_run_total', 'total_usd')
),
-- arg_min by a tuple (ties broken left to right) is a hash aggregate, no sort
best AS (
    SELECT
        model,
        method,
        arg_min(c, (commitment_usd, total_usd, NOT stock_known,
                    platform, offer_id, gpu_count)) AS lowest_rent,
        arg_min(c, (total_usd, train_days, commitment_usd, NOT stock_known,
                    platform, offer_id, gpu_count)) AS lowest_run_total
    FROM plan_candidates AS c
    WHERE plan_date = for_date
      AND (gpu IS NULL OR gpu_model = gpu)
    GROUP BY model, method
),
ranked AS (
    SELECT model, method, 'lowest_rent' AS ranking, lowest_rent AS plan FROM best
    UNION ALL
    SELECT model, method, 'lowest_run_total', lowest_run_total AS plan FROM best
)
SELECT
    CAST(for_date AS DATE) AS plan_date,
    a.model,
    a.model_preset,
    a.params,
    a.method,
    r.ranking,
    CASE WHEN b.plan.offer_id IS NULL THEN 'no_offer_fits' ELSE 'ok' END AS status,
    b.plan.platform,
    b.plan.offer_id,
    b.plan.region,
    b.plan.gpu_model,
    b.plan.gpu_count,
    b.plan.unit_gpu_count,
    b.plan.units_rented,
    b.plan.nodes,
    b.plan.fabric,
    b.plan.internode_gbps_per_gpu,
    b.plan.goodput,
    b.plan.multi_node,
    b.plan.pricing_type,
    b.plan.billing_period,
    b.plan.hourly_rentable,
    b.plan.commitment_hours,
    b.plan.stock_known,
    b.plan.available_gpus,
    b.plan.crawled_at,
    b.plan.stale,
    b.plan.zero_stage,
    b.plan.per_gpu_memory_gb,
    b.plan.rent_usd_per_hour,
    b.plan.rent_cny_per_hour,
    b.plan.rent_usd_per_month,
    b.plan.rent_cny_per_month,
    b.plan.commitment_usd,
    b.plan.commitment_cny,
    b.plan.tokens_per_day,
    b.plan.cost_usd_per_billion_tokens,
    b.plan.cost_cny_per_billion_tokens,
    b.plan.job_tokens,
    b.plan.train_days,
    b.plan.total_usd,
    b.plan.total_cny,
    r.measure,
    CASE r.measure WHEN 'commitment_usd' THEN b.plan.commitment_usd ELSE b.plan.total_usd END AS measure_usd,
    CASE r.measure WHEN 'commitment_usd' THEN b.plan.commitment_cny ELSE b.plan.total_cny END AS measure_cny
FROM asked AS a
CROSS JOIN rankings AS r
LEFT JOIN ranked AS b ON b.model = a.model AND b.method = a.method AND b.ranking = r.ranking;
