-- Jobs' plans (issue 17), many jobs in one pass (issue 29: one query per job held the writer ~0.6 s a
-- job, ten minutes for 1,000): every way to rent the offers (plan_shapes, the daily plans' rule,
-- made once for all the jobs) at every GPU count the sizing model says fits, priced in full by
-- each offer's billing.
--   $jobs          one STRUCT per job: job_index (its place in the caller's list), sizing (which
--                  $requirements rows are its sizing model's answer: jobs sized alike share them),
--                  train_tokens, deadline_hours
--                  (NULL: no deadline), max_gpu_count, platforms and gpus (NULL: any)
--   $requirements  the sizing model's rows (REQUIREMENT_COLUMNS, sizing, internode_gbps_per_gpu: the
--                  fabric a cluster count was sized at, NULL on one node or a unit sold whole, and
--                  goodput), bound by the caller: no frame to register, no pandas
--   $fabrics       the cluster table's crawled rows (plan_shapes' fabrics; NULL: no cluster)
--   train_hours    the job's tokens (x epochs) over the throughput of that GPU count, over the
--                  goodput (the time a cluster loses to interruptions, sizing/fabric.py)
--   billed_hours   what the platform bills for that run (billed_hours: whole periods, the minimum term)
--   total_usd/cny  rent per GPU-hour x GPUs x billed_hours
-- Rows, per job: kind 'plan', the best plan of each GPU model among those that finish within the
-- job's deadline and within $max_train_hours, ranked 1.. by total_usd (with $fastest, by
-- train_hours); and kind 'fastest', the one plan that finishes first whatever the deadline (for
-- "nothing is fast enough" answers). A plan past $max_train_hours is never a plan (its finish,
-- NULL here, would be past what a timestamp holds: `tokens: 1e30` was "Interval out of range").
-- $max_stale_hours bounds a stale latest crawl (GPUPLAN_STALE_HOURS; NULL: no bound, or a day's plan,
-- bounded when its crawls were recorded).
-- Params: $jobs, $requirements, $plan_date, $latest, $max_stale_hours, $max_gpu_count (the largest of the jobs'),
-- $max_train_hours, $fastest, $start_at (UTC: finish = start_at + train_hours).
WITH job_requirements AS (
    SELECT unnest($requirements, recursive := true)
),
jobs AS (
    SELECT unnest($jobs, recursive := true)
),
shapes AS (
    SELECT *
    FROM plan_shapes(
        CAST($plan_date AS DATE),
        CAST($plan_date AS DATE),
        (SELECT map_from_entries(list(DISTINCT (gpu_model, gpus_per_node))) FROM job_requirements),
        $max_gpu_count,
        latest := $latest,
        max_stale_hours := $max_stale_hours,
        fabrics := $fabrics
    )
),
-- A job's choice among offers alike (one GPU model, GPU count, billing period and minimum term: the
-- same train time, bill and deadline for that job) is always the cheapest, by the order its best
-- plan breaks ties in; so only that one is priced for each job (issue 29): across platforms for
-- the jobs that name none, per platform for those that do.
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
    WHERE EXISTS (SELECT 1 FROM jobs WHERE platforms IS NOT NULL)
    GROUP BY s.platform, s.gpu_model, s.plan_gpu_count, s.billing_period, s.min_term_periods,
        s.internode_gbps_per_gpu, s.cluster_min_term_hours
),
options AS (
    SELECT
        j.job_index,
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
        s.cluster_min_term_hours,
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
        r.goodput,
        j.train_tokens / (r.tokens_per_second * 3600 * r.goodput) AS train_hours,
        j.deadline_hours
    FROM (SELECT any_platform, shape.* FROM cheapest_shapes) AS s
    JOIN job_requirements AS r
      ON r.gpu_model = s.gpu_model AND r.gpu_count = s.plan_gpu_count
     AND r.internode_gbps_per_gpu IS NOT DISTINCT FROM s.internode_gbps_per_gpu
    JOIN jobs AS j ON j.sizing = r.sizing AND s.any_platform = (j.platforms IS NULL)
    WHERE r.fits
      AND r.tokens_per_second > 0
      -- a job's GPU limit bounds one node's shapes; a cluster is bounded by its nodes unless the job
      -- names a limit (max_gpus)
      AND s.plan_gpu_count <= CASE WHEN s.fabric IS NULL THEN j.max_gpu_count ELSE coalesce(j.max_gpus, s.plan_gpu_count) END
      AND (j.platforms IS NULL OR list_contains(j.platforms, s.platform))
      AND (j.gpus IS NULL OR list_contains(j.gpus, s.gpu_model))
),
billed AS (
    SELECT
        *,
        cluster_billed_hours(train_hours, billing_period, min_term_periods, cluster_min_term_hours) AS billed_hours,
        price_usd_per_gpu_hour * gpu_count
            * cluster_billed_hours(train_hours, billing_period, min_term_periods, cluster_min_term_hours) AS total_usd,
        price_cny_per_gpu_hour * gpu_count
            * cluster_billed_hours(train_hours, billing_period, min_term_periods, cluster_min_term_hours) AS total_cny,
        train_hours <= $max_train_hours AND (deadline_hours IS NULL OR train_hours <= deadline_hours)
            AS meets_deadline
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
    GROUP BY job_index, gpu_model
),
fastest AS (
    SELECT arg_min(b, (train_hours, total_usd, NOT stock_known, platform, offer_id, gpu_count, units_rented))
        AS plan
    FROM billed AS b
    GROUP BY job_index
),
picked AS (
    SELECT 'plan' AS kind, plan.* FROM best_per_gpu
    UNION ALL
    SELECT 'fastest' AS kind, plan.* FROM fastest
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
    * EXCLUDE (kind, meets_deadline, min_term_periods, deadline_hours, cluster_min_term_hours),
    train_hours / 24 AS train_days,
    -- what is known of a cluster's N nodes: in stock as shown, or unknown (no API of the platform says)
    CASE WHEN fabric IS NULL THEN NULL WHEN stock_known THEN 'shown' ELSE 'unknown' END AS nodes_stock,
    CASE
        WHEN train_hours <= $max_train_hours
        THEN CAST($start_at AS TIMESTAMP) + to_seconds(train_hours * 3600)
    END AS finish
FROM picked
ORDER BY job_index, kind DESC, rank
