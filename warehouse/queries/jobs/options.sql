-- A job's plans (issue 17): every way to rent the offers (plan_shapes, the daily plans' rule) at every
-- GPU count the sizing model says fits ($requirements: the sizing model's rows for this job, a list
-- of STRUCTs with REQUIREMENT_COLUMNS, bound by the caller: no frame to register, no pandas), priced
-- in full by each offer's billing.
--   train_hours   the job's tokens (x epochs) over the throughput of that GPU count
--   billed_hours  what the platform bills for that run (billed_hours: whole periods, the minimum term)
--   total_usd/cny rent per GPU-hour x GPUs x billed_hours
-- Rows: kind 'plan', the best plan of each GPU model among those that finish within $deadline_hours
-- (NULL: no deadline), ranked 1.. by total_usd (with $fastest, by train_hours); and kind 'fastest',
-- the one plan that finishes first whatever the deadline (for "nothing is fast enough" answers).
-- $max_stale_hours bounds a stale latest crawl (GPUPLAN_STALE_HOURS; NULL: no bound, or a day's plan,
-- bounded when its crawls were recorded).
-- Params: $requirements, $plan_date, $latest, $max_stale_hours, $max_gpu_count, $platforms, $gpus, $train_tokens, $deadline_hours,
-- $fastest, $start_at (UTC: finish = start_at + train_hours).
WITH job_requirements AS (
    SELECT unnest($requirements, recursive := true)
),
options AS (
    SELECT
        s.platform,
        s.offer_id,
        s.region,
        s.gpu_model,
        s.gpu_count AS unit_gpu_count,
        s.units_rented,
        s.plan_gpu_count AS gpu_count,
        s.nodes,
        s.pricing_type,
        s.billing_period,
        s.min_term_periods,
        s.hourly_rentable,
        s.stock_known,
        s.available_gpus,
        s.crawled_at,
        s.stale,
        s.price_usd_per_gpu_hour,
        s.price_cny_per_gpu_hour,
        r.zero_stage,
        r.per_gpu_memory_gb,
        r.mfu,
        r.tokens_per_second,
        $train_tokens / (r.tokens_per_second * 3600) AS train_hours
    FROM plan_shapes(
        CAST($plan_date AS DATE),
        CAST($plan_date AS DATE),
        (SELECT map_from_entries(list(DISTINCT (gpu_model, gpus_per_node))) FROM job_requirements),
        $max_gpu_count,
        latest := $latest,
        max_stale_hours := $max_stale_hours
    ) AS s
    JOIN job_requirements AS r ON r.gpu_model = s.gpu_model AND r.gpu_count = s.plan_gpu_count
    WHERE r.fits
      AND r.tokens_per_second > 0
      AND ($platforms IS NULL OR list_contains($platforms, s.platform))
      AND ($gpus IS NULL OR list_contains($gpus, s.gpu_model))
),
billed AS (
    SELECT
        *,
        billed_hours(train_hours, billing_period, min_term_periods) AS billed_hours,
        price_usd_per_gpu_hour * gpu_count * billed_hours(train_hours, billing_period, min_term_periods)
            AS total_usd,
        price_cny_per_gpu_hour * gpu_count * billed_hours(train_hours, billing_period, min_term_periods)
            AS total_cny,
        $deadline_hours IS NULL OR train_hours <= $deadline_hours AS meets_deadline
    FROM options
),
-- arg_min by a tuple (ties broken left to right) is a hash aggregate: no sort of the options
best_per_gpu AS (
    SELECT
        CASE
            WHEN $fastest THEN arg_min(b, (train_hours, total_usd, NOT stock_known, platform, offer_id,
                                           gpu_count, units_rented))
            ELSE arg_min(b, (total_usd, train_hours, NOT stock_known, platform, offer_id,
                             gpu_count, units_rented))
        END AS plan
    FROM billed AS b
    WHERE meets_deadline
    GROUP BY gpu_model
),
fastest AS (
    SELECT arg_min(b, (train_hours, total_usd, NOT stock_known, platform, offer_id, gpu_count, units_rented))
        AS plan
    FROM billed AS b
),
picked AS (
    SELECT 'plan' AS kind, plan.* FROM best_per_gpu
    UNION ALL
    SELECT 'fastest' AS kind, plan.* FROM fastest WHERE plan IS NOT NULL
)
SELECT
    kind,
    CAST(row_number() OVER (
        PARTITION BY kind
        ORDER BY
            CASE WHEN $fastest THEN train_hours ELSE total_usd END,
            CASE WHEN $fastest THEN total_usd ELSE train_hours END,
            NOT stock_known, platform, offer_id, gpu_count
    ) AS INTEGER) AS rank,
    * EXCLUDE (kind, meets_deadline, min_term_periods),
    train_hours / 24 AS train_days,
    CAST($start_at AS TIMESTAMP) + to_seconds(train_hours * 3600) AS finish
FROM picked
ORDER BY kind DESC, rank
