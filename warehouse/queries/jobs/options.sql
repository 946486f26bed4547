-- Jobs' plans, many jobs in one pass: every way to rent the offers (the session's `job_shapes`, which
-- jobs/shapes.sql makes once for all the jobs: plan_shapes, the daily plans' rule, each job's pick
-- among shapes alike) at every GPU count the sizing model says fits, priced in full by each offer's
-- billing.
--   $jobs          one STRUCT per job: job_index (its place in the caller's list), sizing (which
--                  $requirements rows are its sizing model's answer: jobs sized alike share them),
--                  train_tokens, deadline_hours
--                  (NULL: no deadline), max_gpu_count, max_gpus, platforms and gpus (NULL: any)
--   $requirements  the sizing model's rows (REQUIREMENT_COLUMNS, sizing, internode_gbps_per_gpu: the
--                  fabric a cluster count was sized at, NULL on one node or a unit sold whole, and
--                  goodput), bound by the caller: no frame to register, no pandas
--   train_hours    the job's tokens (x epochs) over the throughput of that GPU count, over the
--                  goodput (the time a cluster loses to interruptions, sizing/fabric.py)
--   billed_hours   what the platform bills for that run (billed_hours: whole periods, the minimum term)
--   total_usd/cny  rent per GPU-hour x GPUs x billed_hours
-- Rows, per job: kind 'plan', the best plan of each GPU model among those that finish within the
-- job's deadline and within $max_train_hours, ranked 1.. by total_usd (with $fastest, by
-- train_hours); and kind 'fastest', the one plan that finishes first whatever the deadline (for
-- "nothing is fast enough" answers). A plan past $max_train_hours is never a plan (its finish,
-- NULL here, would be past what a timestamp holds: `tokens: 1e30` was "Interval out of range").
-- The work grows with jobs x the shapes their sizing fits, so each job's rows stay narrow (numbers and
-- keys) until its picks are made; only the picks are joined back to the shapes' columns.
-- Params: $jobs, $requirements, $max_train_hours, $fastest, $start_at (UTC: finish = start_at +
-- train_hours).
WITH job_requirements AS MATERIALIZED (
    SELECT CAST(row_number() OVER () AS INTEGER) AS requirement_no, *
    FROM (SELECT unnest($requirements, recursive := true))
),
jobs AS (
    SELECT unnest($jobs, recursive := true)
),
-- each shape with each sizing's row that fits it: what a job of that sizing may rent
pairs AS MATERIALIZED (
    SELECT
        s.shape_no,
        r.requirement_no,
        r.sizing,
        s.any_platform,
        s.tie,
        s.platform,
        s.gpu_model,
        s.plan_gpu_count,
        s.fabric,
        s.billing_period,
        s.min_term_periods,
        s.cluster_min_term_hours,
        s.price_usd_per_gpu_hour,
        s.price_cny_per_gpu_hour,
        r.tokens_per_second * 3600 * r.goodput AS tokens_per_hour
    FROM job_shapes AS s
    JOIN job_requirements AS r
      ON r.gpu_model = s.gpu_model AND r.gpu_count = s.plan_gpu_count
     AND r.internode_gbps_per_gpu IS NOT DISTINCT FROM s.internode_gbps_per_gpu
    WHERE r.fits AND r.tokens_per_second > 0
),
options AS (
    SELECT
        j.job_index,
        p.gpu_model,
        p.tie,
        p.shape_no,
        p.requirement_no,
        p.price_usd_per_gpu_hour,
        p.price_cny_per_gpu_hour,
        p.plan_gpu_count,
        p.billing_period,
        p.min_term_periods,
        p.cluster_min_term_hours,
        j.train_tokens / p.tokens_per_hour AS train_hours,
        j.deadline_hours
    FROM pairs AS p
    JOIN jobs AS j ON j.sizing = p.sizing AND p.any_platform = (j.platforms IS NULL)
    -- a job's GPU limit bounds one node's shapes; a cluster is bounded by its nodes unless the job
    -- names a limit (max_gpus)
    WHERE p.plan_gpu_count <= CASE WHEN p.fabric IS NULL THEN j.max_gpu_count ELSE coalesce(j.max_gpus, p.plan_gpu_count) END
      AND (j.platforms IS NULL OR list_contains(j.platforms, p.platform))
      AND (j.gpus IS NULL OR list_contains(j.gpus, p.gpu_model))
),
billed AS (
    SELECT
        job_index,
        gpu_model,
        tie,
        shape_no,
        requirement_no,
        train_hours,
        cluster_billed_hours(train_hours, billing_period, min_term_periods, cluster_min_term_hours) AS billed_hours,
        price_usd_per_gpu_hour * plan_gpu_count
            * cluster_billed_hours(train_hours, billing_period, min_term_periods, cluster_min_term_hours) AS total_usd,
        price_cny_per_gpu_hour * plan_gpu_count
            * cluster_billed_hours(train_hours, billing_period, min_term_periods, cluster_min_term_hours) AS total_cny,
        train_hours <= $max_train_hours AND (deadline_hours IS NULL OR train_hours <= deadline_hours)
            AS meets_deadline
    FROM options
),
-- arg_min by a tuple (ties broken left to right) is a hash aggregate: no sort of the options
best_per_gpu AS (
    SELECT
        CASE
            WHEN $fastest THEN arg_min(
                {'job_index': job_index, 'shape_no': shape_no, 'requirement_no': requirement_no,
                 'train_hours': train_hours, 'billed_hours': billed_hours, 'total_usd': total_usd,
                 'total_cny': total_cny},
                (train_hours, total_usd, tie))
            ELSE arg_min(
                {'job_index': job_index, 'shape_no': shape_no, 'requirement_no': requirement_no,
                 'train_hours': train_hours, 'billed_hours': billed_hours, 'total_usd': total_usd,
                 'total_cny': total_cny},
                (total_usd, train_hours, tie))
        END AS plan
    FROM billed
    WHERE meets_deadline
    GROUP BY job_index, gpu_model
),
fastest AS (
    SELECT arg_min(
            {'job_index': job_index, 'shape_no': shape_no, 'requirement_no': requirement_no,
             'train_hours': train_hours, 'billed_hours': billed_hours, 'total_usd': total_usd,
             'total_cny': total_cny},
            (train_hours, total_usd, tie))
        AS plan
    FROM billed
    GROUP BY job_index
),
picked AS (
    SELECT 'plan' AS kind, plan.* FROM best_per_gpu
    UNION ALL
    SELECT 'fastest' AS kind, plan.* FROM fastest
),
plans AS (
    SELECT
        k.kind,
        k.job_index,
        s.platform,
        s.offer_id,
        s.region,
        s.gpu_model,
        s.gpu_count AS unit_gpu_count,
        s.units_rented,
        s.plan_gpu_count AS gpu_count,
        s.nodes,
        s.fabric,
        s.internode_gbps_per_gpu,
        s.pricing_type,
        s.billing_period,
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
        r.goodput,
        k.train_hours,
        k.billed_hours,
        k.total_usd,
        k.total_cny
    FROM picked AS k
    JOIN job_shapes AS s USING (shape_no)
    JOIN job_requirements AS r USING (requirement_no)
)
SELECT
    kind,
    CAST(row_number() OVER (
        PARTITION BY job_index, kind
        ORDER BY
            CASE WHEN $fastest THEN train_hours ELSE total_usd END,
            CASE WHEN $fastest THEN total_usd ELSE train_hours END,
            NOT stock_known, platform, offer_id, gpu_count
    ) AS INTEGER) AS rank,
    * EXCLUDE (kind),
    train_hours / 24 AS train_days,
    -- what is known of a cluster's N nodes: in stock as shown, or unknown (no API of the platform says)
    CASE WHEN fabric IS NULL THEN NULL WHEN stock_known THEN 'shown' ELSE 'unknown' END AS nodes_stock,
    CASE
        WHEN train_hours <= $max_train_hours
        THEN CAST($start_at AS TIMESTAMP) + to_seconds(train_hours * 3600)
    END AS finish
FROM plans
ORDER BY job_index, kind DESC, rank
