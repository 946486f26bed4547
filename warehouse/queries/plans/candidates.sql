-- The day's candidate plans: for each (model, method) and GPU model, the configuration of the day's
-- offers that fits with the lowest rent for a month, and the one billed the least for one run of
-- $job_tokens (the two daily rankings, definitions/00_ranked_plans.sql).
-- Inputs: the day's offers (judged_offers through plan_shapes), plan_requirements (the sizing model).
-- $max_gpu_count is the largest job considered.
-- How an offer can be rented (units, nodes, stock, no joining of separate machines, spot and
-- placeholder prices left out) is `plan_shapes`, the rule the job plans share; node
-- sizes come from the day's requirements (the sizing catalog).
-- Each candidate also says, for a run of $job_tokens tokens (GPUPLAN_DEFAULT_TOKENS), how many days it
-- trains and its total by the offer's billing (`cluster_billed_hours`: `billed_hours`, and never under a
-- cluster's own minimum term).
-- Whole nodes of an offer the cluster table lists ($fabrics, plan_shapes' fabrics; NULL: none) are
-- candidates too, each joined to the requirement sized at its fabric's Gb/s per GPU, its train time
-- over the goodput of its GPUs (plan_requirements.goodput, 1 off a cluster).
-- Params: $plan_date, $max_gpu_count, $job_tokens, $computed_at, $fabrics.
INSERT INTO plan_candidates BY NAME
WITH
-- materialized: the shape ids must be the same wherever shapes is read
shapes AS MATERIALIZED (
    SELECT
        s.*,
        -- a month, or the offer's or the cluster's minimum term where longer
        CAST(ceil(greatest(
            hours_per_billing_period('month'), s.min_term_periods * hours_per_billing_period(s.billing_period),
            coalesce(s.cluster_min_term_hours, 0)
        )) AS INTEGER) AS commitment_hours,
        row_number() OVER () AS shape_id
    FROM plan_shapes(
        CAST($plan_date AS DATE),
        CAST($plan_date AS DATE),
        (
            SELECT map_from_entries(list(DISTINCT (gpu_model, gpus_per_node)))
            FROM plan_requirements
            WHERE plan_date = $plan_date
        ),
        $max_gpu_count,
        fabrics := $fabrics
    ) AS s
),
-- Per (GPU model, GPU count) only a few shapes can win for any (model, method): the least
-- commitment, and per billing period and minimum term the least rent per hour (the throughput, so the
-- run's hours, is the same for all of them: among offers billed alike the cheapest per hour bills the
-- least for any run). Keeping just those before joining the requirements shrinks the join, the big
-- part, to a few rows per GPU model and count.
-- arg_min by a tuple (ties broken left to right, as in the rankings) is a hash aggregate: no sort.
by_rent AS (
    SELECT arg_min(shape_id, (price_usd_per_gpu_hour * commitment_hours, price_usd_per_gpu_hour,
                              available_gpus IS NULL, platform, offer_id, units_rented)) AS shape_id
    FROM shapes
    GROUP BY gpu_model, plan_gpu_count, internode_gbps_per_gpu
),
by_run AS (
    SELECT arg_min(shape_id, (price_usd_per_gpu_hour, available_gpus IS NULL, platform, offer_id,
                              units_rented)) AS shape_id
    FROM shapes
    GROUP BY gpu_model, plan_gpu_count, billing_period, min_term_periods, internode_gbps_per_gpu,
        cluster_min_term_hours
),
contending_shapes AS (
    SELECT s.*
    FROM shapes AS s
    SEMI JOIN (
        SELECT shape_id FROM by_rent
        UNION
        SELECT shape_id FROM by_run
    ) AS c USING (shape_id)
),
-- Every (contending shape, model, method) that fits, kept narrow, with what one run of $job_tokens
-- is billed (whole periods, at least the minimum term).
fitting AS (
    SELECT
        r.model,
        r.method,
        s.platform,
        s.gpu_model,
        s.shape_id,
        s.plan_gpu_count AS gpu_count,
        s.units_rented,
        s.offer_id,
        s.stock_known,
        s.price_usd_per_gpu_hour * s.plan_gpu_count * s.commitment_hours AS commitment_usd,
        $job_tokens / (r.tokens_per_second * r.goodput * 3600) AS train_hours,
        s.price_usd_per_gpu_hour * s.plan_gpu_count
            * cluster_billed_hours($job_tokens / (r.tokens_per_second * r.goodput * 3600), s.billing_period, s.min_term_periods, s.cluster_min_term_hours)
            AS total_usd
    FROM contending_shapes AS s
    JOIN plan_requirements AS r
      ON r.plan_date = $plan_date
     AND r.gpu_model = s.gpu_model
     AND r.gpu_count = s.plan_gpu_count
     AND r.internode_gbps_per_gpu IS NOT DISTINCT FROM s.internode_gbps_per_gpu
    WHERE r.fits AND r.tokens_per_second > 0
),
-- Per (model, method, GPU model): the shape with the least commitment and the one that bills the
-- least for the run (at whichever GPU count: more GPUs of an offer where that is cheaper), whichever
-- platform sells it (one row when they agree). The day's winners of both rankings are among them,
-- and a reader sees the best way to train with each GPU model.
best_per_gpu AS (
    SELECT
        model,
        method,
        arg_min(shape_id, (commitment_usd, total_usd, NOT stock_known, platform, offer_id,
                           gpu_count, units_rented)) AS by_rent,
        arg_min(shape_id, (total_usd, train_hours, commitment_usd, NOT stock_known, platform, offer_id,
                           gpu_count, units_rented)) AS by_run
    FROM fitting
    GROUP BY model, method, gpu_model
),
best AS (
    SELECT model, method, by_rent AS shape_id FROM best_per_gpu
    UNION
    SELECT model, method, by_run FROM best_per_gpu
)
SELECT
    CAST($plan_date AS DATE) AS plan_date,
    r.model,
    r.model_preset,
    r.params,
    r.method,
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
    r.goodput,
    s.pricing_type,
    s.billing_period,
    s.hourly_rentable,
    s.commitment_hours,
    s.stock_known,
    s.available_gpus,
    s.crawled_at,
    s.stale,
    r.zero_stage,
    r.per_gpu_memory_gb,
    r.multi_node,
    s.price_usd_per_gpu_hour * s.plan_gpu_count AS rent_usd_per_hour,
    s.price_cny_per_gpu_hour * s.plan_gpu_count AS rent_cny_per_hour,
    s.price_usd_per_gpu_hour * s.plan_gpu_count * hours_per_billing_period('month') AS rent_usd_per_month,
    s.price_cny_per_gpu_hour * s.plan_gpu_count * hours_per_billing_period('month') AS rent_cny_per_month,
    s.price_usd_per_gpu_hour * s.plan_gpu_count * s.commitment_hours AS commitment_usd,
    s.price_cny_per_gpu_hour * s.plan_gpu_count * s.commitment_hours AS commitment_cny,
    r.tokens_per_second * r.goodput * 86400 AS tokens_per_day,
    s.price_usd_per_gpu_hour * s.plan_gpu_count / (r.tokens_per_second * r.goodput * 3600) * 1e9
        AS cost_usd_per_billion_tokens,
    s.price_cny_per_gpu_hour * s.plan_gpu_count / (r.tokens_per_second * r.goodput * 3600) * 1e9
        AS cost_cny_per_billion_tokens,
    CAST($job_tokens AS DOUBLE) AS job_tokens,
    $job_tokens / (r.tokens_per_second * r.goodput * 86400) AS train_days,
    s.price_usd_per_gpu_hour * s.plan_gpu_count
        * cluster_billed_hours($job_tokens / (r.tokens_per_second * r.goodput * 3600), s.billing_period, s.min_term_periods, s.cluster_min_term_hours)
        AS total_usd,
    s.price_cny_per_gpu_hour * s.plan_gpu_count
        * cluster_billed_hours($job_tokens / (r.tokens_per_second * r.goodput * 3600), s.billing_period, s.min_term_periods, s.cluster_min_term_hours)
        AS total_cny,
    CAST($computed_at AS TIMESTAMP) AS computed_at
FROM best AS b
JOIN shapes AS s USING (shape_id)
JOIN plan_requirements AS r
  ON r.plan_date = $plan_date
 AND r.model = b.model
 AND r.method = b.method
 AND r.gpu_model = s.gpu_model
 AND r.gpu_count = s.plan_gpu_count
 AND r.internode_gbps_per_gpu IS NOT DISTINCT FROM s.internode_gbps_per_gpu
