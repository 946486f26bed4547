-- The best plan of every subject on every day it was planned: each daily (model, method, ranking)
-- (cheapest_plans, 'no_offer_fits' where nothing fits) and each job's rank-1 plan (job_plans,
-- 'no_plan' with the reason where it has none). What the one change detector compares with the
-- previous day (queries/plans/changes.sql).
--   subject      'plan' | 'job' (then `job` is its name; model and method are the job's)
--   ok           a plan exists (status 'ok')
--   measure      what a price move compares: 'rent_usd_per_month' (a daily plan, either ranking) |
--                'total_usd' (a job: what its whole run is billed)
--   measure_usd  its value
CREATE OR REPLACE VIEW best_plans AS
SELECT
    'plan' AS subject,
    CAST(NULL AS VARCHAR) AS job,
    plan_date,
    model,
    method,
    ranking,
    status,
    status = 'ok' AS ok,
    CAST(NULL AS VARCHAR) AS reason,
    platform,
    offer_id,
    gpu_model,
    gpu_count,
    'rent_usd_per_month' AS measure,
    rent_usd_per_month AS measure_usd
FROM cheapest_plans
UNION ALL
SELECT
    'job' AS subject,
    job,
    plan_date,
    model,
    method,
    'lowest_total' AS ranking,
    status,
    status = 'ok' AS ok,
    reason,
    platform,
    offer_id,
    gpu_model,
    gpu_count,
    'total_usd' AS measure,
    total_usd AS measure_usd
FROM job_plans
WHERE rank = 1;
