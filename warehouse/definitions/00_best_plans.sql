-- The best plan of every subject on every day it was planned: each daily (model, method, ranking)
-- (cheapest_plans, 'no_offer_fits' where nothing fits) and each job's rank-1 plan (job_plans,
-- 'no_plan' with the reason where it has none). What the one change detector compares with the
-- previous day (queries/plans/changes.sql), and what the digest says of a changed plan
-- (queries/digest/plan_changes.sql).
--   subject      'plan' | 'job' (then `job` is its name; model and method are the job's)
--   ok           a plan exists (status 'ok')
--   measure      what its ranking ranks by, so what a price move compares: a daily plan's as stored
--                with it (cheapest_plans.measure: 'commitment_usd' for lowest_rent, 'total_usd' for
--                lowest_run_total, definitions/00_ranked_plans.sql) | 'total_usd' (a job: what its
--                whole run is billed, the order of job_plans.rank)
--   measure_usd  its value; measure_cny in CNY
--   usd_per_gpu_hour, cny_per_gpu_hour   the offer's price
--   nodes, fabric  the machines the plan takes, and the fabric joining them (a cluster plan's,
--                  cheapest_plans.fabric, job_plans.fabric; NULL: one machine or a unit sold whole)
CREATE OR REPLACE VIEW best_plans AS
SELECT
    'plan' AS subject,
    CAST(NULL AS VARCHAR) AS job,
    plan_date,
    model,
    method,
    params,
    ranking,
    status,
    status = 'ok' AS ok,
    CAST(NULL AS VARCHAR) AS reason,
    platform,
    offer_id,
    pricing_type,
    billing_period,
    gpu_model,
    gpu_count,
    nodes,
    fabric,
    -- rent_*_per_hour is the offer's price per GPU-hour times the plan's GPUs
    rent_usd_per_hour / gpu_count AS usd_per_gpu_hour,
    rent_cny_per_hour / gpu_count AS cny_per_gpu_hour,
    measure,
    measure_usd,
    measure_cny
FROM cheapest_plans
UNION ALL
SELECT
    'job' AS subject,
    job,
    plan_date,
    model,
    method,
    CAST(NULL AS DOUBLE) AS params,
    'lowest_total' AS ranking,
    status,
    status = 'ok' AS ok,
    reason,
    platform,
    offer_id,
    pricing_type,
    billing_period,
    gpu_model,
    gpu_count,
    nodes,
    fabric,
    price_usd_per_gpu_hour AS usd_per_gpu_hour,
    -- rows planned before job_plans kept the CNY price: at the run's own rate
    coalesce(price_cny_per_gpu_hour, price_usd_per_gpu_hour * total_cny / total_usd) AS cny_per_gpu_hour,
    'total_usd' AS measure,
    total_usd AS measure_usd,
    total_cny AS measure_cny
FROM job_plans
WHERE rank = 1;
