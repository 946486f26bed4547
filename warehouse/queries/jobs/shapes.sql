-- The ways to rent the offers that jobs' plans price from, made once for a set of jobs into this
-- session's temporary table `job_shapes` (jobs/options.sql reads it, a chunk of jobs at a time): every
-- shape plan_shapes gives (the daily plans' rule), reduced to the one a job would pick among shapes
-- alike (one GPU model, GPU count, billing period, minimum term and fabric: the same train time, bill
-- and deadline for any job), by the order its best plan breaks ties in: across platforms for the jobs
-- that name none, and with $per_platform per platform too (for the jobs that do).
--   $node_sizes     one STRUCT(gpu_model, gpus_per_node) per GPU model the jobs are sized on
--   $max_gpu_count  the largest GPU count of one node's shape any of the jobs may take
--   $max_stale_hours, $plan_date, $latest, $fabrics   as jobs/options.sql says
-- Columns: shape_no (a key), any_platform, tie (the shapes in the order a job's plan breaks ties in
-- after its total and train time: stock known first, platform, offer, GPU count, units rented), and
-- plan_shapes' columns.
CREATE OR REPLACE TEMP TABLE job_shapes AS
WITH shapes AS (
    SELECT *
    FROM plan_shapes(
        CAST($plan_date AS DATE),
        CAST($plan_date AS DATE),
        map_from_entries(CAST($node_sizes AS STRUCT(gpu_model VARCHAR, gpus_per_node INTEGER)[])),
        $max_gpu_count,
        latest := $latest,
        max_stale_hours := $max_stale_hours,
        fabrics := $fabrics
    )
),
cheapest_shapes AS (
    SELECT TRUE AS any_platform,
        arg_min(s, (s.price_usd_per_gpu_hour, NOT s.stock_known, s.platform, s.offer_id, s.units_rented))
            AS shape
    FROM shapes AS s
    GROUP BY s.gpu_model, s.plan_gpu_count, s.billing_period, s.min_term_periods, s.internode_gbps_per_gpu,
        s.cluster_min_term_hours
    UNION ALL
    SELECT FALSE AS any_platform,
        arg_min(s, (s.price_usd_per_gpu_hour, NOT s.stock_known, s.offer_id, s.units_rented)) AS shape
    FROM shapes AS s
    WHERE $per_platform
    GROUP BY s.platform, s.gpu_model, s.plan_gpu_count, s.billing_period, s.min_term_periods,
        s.internode_gbps_per_gpu, s.cluster_min_term_hours
)
SELECT
    CAST(row_number() OVER () AS INTEGER) AS shape_no,
    any_platform,
    CAST(row_number() OVER (
        ORDER BY NOT shape.stock_known, shape.platform, shape.offer_id, shape.plan_gpu_count, shape.units_rented,
            any_platform
    ) AS INTEGER) AS tie,
    shape.*
FROM cheapest_shapes
