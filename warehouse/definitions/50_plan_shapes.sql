-- How an offer can be rented: one rule set for the daily plans, the ad-hoc job plans (`gpuplan plans
-- --tokens`) and the daily job plans (GPUPLAN_JOBS). Every way a plan can rent the plannable offers (judged_offers: not spot, not under the price floor)
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
-- A stale offer (judged_offers: carried from an earlier crawl) has unknown stock: stock_known FALSE.
-- max_stale_hours: judged_offers' bound on a stale latest crawl (with latest).
-- Columns: every judged_offers column, gpus_per_node, units_rented, plan_gpu_count, nodes, stock_known.
CREATE OR REPLACE MACRO plan_shapes(
    first_day, last_day, node_sizes, max_gpu_count, latest := FALSE, max_stale_hours := NULL
) AS TABLE
WITH sized_offers AS (
    SELECT o.*, node_sizes[o.gpu_model] AS gpus_per_node
    FROM judged_offers(first_day, last_day, latest := latest, max_stale_hours := max_stale_hours) AS o
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
