-- One planning rule set for the daily plans, the ad-hoc job plans (`gpuplan plans --tokens`) and the
-- daily job plans (GPUPLAN_JOBS), issue 17: how an offer can be rented (plan_shapes), what a run of
-- so many hours is billed (billed_hours), and the daily tables' figures for a default token budget.

-- The hours a platform bills for a run of `run_hours`: whole billing periods (an hourly offer rounds
-- up to whole hours, a daily one to days, a weekly one to weeks, a monthly one to months), and never
-- fewer than the offer's minimum term (a monthly quote costs its whole term even when the run ends
-- in a week; a run longer than the term pays the periods it needs).
CREATE MACRO billed_hours(run_hours, billing_period, min_term_periods) AS
    greatest(min_term_periods, ceil(run_hours / hours_per_billing_period(billing_period)))
        * hours_per_billing_period(billing_period);

-- Every way a plan can rent the plannable offers (judged_offers: not spot, not under the price floor)
-- of the days [first_day, last_day], or with latest := TRUE of each platform's latest usable crawl.
-- A shape is `units_rented` units of one offer (plan_gpu_count = units_rented x the unit's GPUs), see
-- docs/article-comparison.md:
--   * one unit, as sold; a unit that spans nodes is a cluster the platform sells as one (multi-node);
--   * several units of an offer priced per GPU, on one node (units x unit GPUs <= gpus_per_node): the
--     platform lets one pick the card count on a machine (AutoDL, RunPod, broker per-card quotes);
--   never several separate machines: nothing says they share the fabric a multi-node job needs.
--   Never more GPUs than the offer says are free (available_gpus; NULL = unknown: kept, stock_known
--   FALSE), nor more than max_gpu_count.
-- node_sizes: MAP(gpu_model -> GPUs one node holds), from the sizing catalog through the caller's
-- requirements (an offer of a GPU not in it has no shape: nothing sized it).
-- Columns: every judged_offers column, gpus_per_node, units_rented, plan_gpu_count, nodes, stock_known.
CREATE MACRO plan_shapes(first_day, last_day, node_sizes, max_gpu_count, latest := FALSE) AS TABLE
WITH sized_offers AS (
    SELECT o.*, node_sizes[o.gpu_model] AS gpus_per_node
    FROM judged_offers(first_day, last_day, latest := latest) AS o
    WHERE o.plannable
      AND node_sizes[o.gpu_model] IS NOT NULL
)
SELECT
    o.*,
    k.units_rented,
    k.units_rented * o.gpu_count AS plan_gpu_count,
    CAST(ceil(k.units_rented * o.gpu_count / o.gpus_per_node) AS INTEGER) AS nodes,
    o.available_gpus IS NOT NULL AS stock_known
FROM sized_offers AS o,
    -- more than one unit only per GPU and on one node; the filter below bounds stock and size
    unnest(range(1, CASE WHEN o.price_per = 'gpu' THEN greatest(1, o.gpus_per_node // o.gpu_count) ELSE 1 END + 1))
        AS k(units_rented)
WHERE k.units_rented * o.gpu_count <= max_gpu_count
  AND (o.available_gpus IS NULL OR k.units_rented * o.gpu_count <= o.available_gpus);

-- The daily model-size tables gain the article's column: for a default token budget per run
-- (GPUPLAN_DEFAULT_TOKENS), how many days a plan trains and what it costs in total by its billing.
ALTER TABLE plan_candidates ADD COLUMN job_tokens DOUBLE;      -- the budget the next three are for
ALTER TABLE plan_candidates ADD COLUMN train_days DOUBLE;      -- job_tokens / tokens per day
ALTER TABLE plan_candidates ADD COLUMN total_usd DOUBLE;       -- billed_hours of the run x rent per hour
ALTER TABLE plan_candidates ADD COLUMN total_cny DOUBLE;
ALTER TABLE cheapest_plans ADD COLUMN job_tokens DOUBLE;
ALTER TABLE cheapest_plans ADD COLUMN train_days DOUBLE;
ALTER TABLE cheapest_plans ADD COLUMN total_usd DOUBLE;
ALTER TABLE cheapest_plans ADD COLUMN total_cny DOUBLE;

-- What a reader of a job plan needs beyond 050: the shape, the CNY price, the hours billed, the deadline.
ALTER TABLE job_plans ADD COLUMN units_rented INTEGER;         -- units of the offer (plan: gpu_count)
ALTER TABLE job_plans ADD COLUMN price_cny_per_gpu_hour DOUBLE;
ALTER TABLE job_plans ADD COLUMN billed_hours DOUBLE;          -- billed_hours(train hours, billing)
ALTER TABLE job_plans ADD COLUMN within_days DOUBLE;           -- the job's deadline (NULL: none)
