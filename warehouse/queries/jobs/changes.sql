-- What changed in each job's best plan (rank 1) on $plan_date against the previous day with job plans.
-- One row per change; a plan can change in several ways at once (platform and total, say).
--   new_platform / new_gpu / new_count   the best plan moved
--   price_up / price_down                the total moved by at least $price_move_pct percent
--   now_possible / no_longer_possible    a plan exists where none did (or the deadline is met again),
--                                        or none does any more (the reason says why)
-- A job new today (or gone) has nothing to compare with: no row.
-- Params: $plan_date, $price_move_pct, $computed_at.
INSERT INTO job_plan_changes BY NAME
WITH previous_day AS (
    SELECT max(plan_date) AS plan_date
    FROM job_plans
    WHERE plan_date < $plan_date
),
pairs AS (
    SELECT
        cur.job,
        prev.status AS old_status,
        cur.status AS new_status,
        prev.platform AS old_platform,
        cur.platform AS new_platform,
        prev.gpu_model AS old_gpu_model,
        cur.gpu_model AS new_gpu_model,
        prev.gpu_count AS old_gpu_count,
        cur.gpu_count AS new_gpu_count,
        prev.total_usd AS old_total_usd,
        cur.total_usd AS new_total_usd,
        cur.reason AS new_reason,
        prev.platform || ' ' || prev.gpu_model || ' x' || prev.gpu_count AS old_plan,
        cur.platform || ' ' || cur.gpu_model || ' x' || cur.gpu_count AS new_plan,
        100.0 * (cur.total_usd - prev.total_usd) / prev.total_usd AS pct_change
    FROM job_plans AS cur
    JOIN previous_day AS d ON TRUE
    JOIN job_plans AS prev
      ON prev.plan_date = d.plan_date
     AND prev.job = cur.job
     AND prev.rank = 1
    WHERE cur.plan_date = $plan_date
      AND cur.rank = 1
),
both_ok AS (
    SELECT * FROM pairs WHERE old_status = 'ok' AND new_status = 'ok'
),
changes AS (
    SELECT *, 'new_platform' AS change_type, old_plan || ' -> ' || new_plan AS detail
    FROM both_ok
    WHERE old_platform <> new_platform

    UNION ALL BY NAME
    SELECT *, 'new_gpu' AS change_type, old_plan || ' -> ' || new_plan AS detail
    FROM both_ok
    WHERE old_gpu_model <> new_gpu_model

    UNION ALL BY NAME
    SELECT *, 'new_count' AS change_type, old_plan || ' -> ' || new_plan AS detail
    FROM both_ok
    WHERE old_gpu_count <> new_gpu_count

    UNION ALL BY NAME
    SELECT
        *,
        CASE WHEN pct_change > 0 THEN 'price_up' ELSE 'price_down' END AS change_type,
        printf('%s: %.2f -> %.2f USD in total (%+.1f%%)', new_plan, old_total_usd, new_total_usd, pct_change)
            AS detail
    FROM both_ok
    WHERE abs(pct_change) >= $price_move_pct

    UNION ALL BY NAME
    SELECT *, 'now_possible' AS change_type, printf('a plan now: %s, %.2f USD in total', new_plan, new_total_usd)
        AS detail
    FROM pairs
    WHERE old_status = 'no_plan' AND new_status = 'ok'

    UNION ALL BY NAME
    SELECT *, 'no_longer_possible' AS change_type, new_reason || '; was ' || old_plan AS detail
    FROM pairs
    WHERE old_status = 'ok' AND new_status = 'no_plan'
)
SELECT
    CAST($plan_date AS DATE) AS change_date,
    job,
    change_type,
    old_platform,
    new_platform,
    old_gpu_model,
    new_gpu_model,
    old_gpu_count,
    new_gpu_count,
    old_total_usd,
    new_total_usd,
    pct_change,
    detail,
    CAST($computed_at AS TIMESTAMP) AS computed_at
FROM changes
