-- How an offer can be rented: one rule set for the daily plans, the ad-hoc job plans (`gpuplan plans
-- --tokens`) and the daily job plans (GPUPLAN_JOBS). Every way a plan can rent the plannable offers (judged_offers: not spot, not under the price floor)
-- of the days [first_day, last_day], or with latest := TRUE of each platform's latest usable crawl.
-- A shape is `units_rented` units of one offer (plan_gpu_count = units_rented x the unit's GPUs), see
-- docs/article-comparison.md:
--   * one unit, as sold; a unit that spans nodes is a cluster the platform sells as one (multi-node);
--   * several units of an offer priced per GPU, on one node (units x unit GPUs <= gpus_per_node): the
--     platform lets one pick the card count on a machine (AutoDL, RunPod, broker per-card quotes);
--   several whole nodes of one offer joined into a cluster, only where `fabrics` (sizing/data/
--   clusters.csv, bound by the caller) names the offer's platform and a pattern its offer_id matches
--   in full: that row's node counts (2 and more, within its limits and the caller's node setting),
--   its fabric and Gb/s per GPU in the shape's columns. Nothing else joins separate machines: a
--   private network is no training fabric.
--   An offer of a row sold only as a cluster (joined_only: an instant cluster) has no one-node shape.
--   Never more GPUs than the offer says are free (available_gpus; NULL = unknown: kept, stock_known
--   FALSE), nor, on one node, more than max_gpu_count (a cluster is bounded by its node counts).
-- node_sizes: MAP(gpu_model -> GPUs one node holds), from the sizing catalog through the caller's
-- requirements (an offer of a GPU not in it has no shape: nothing sized it).
-- A stale offer (judged_offers: carried from an earlier crawl) has unknown stock: stock_known FALSE.
-- max_stale_hours: judged_offers' bound on a stale latest crawl (with latest).
-- fabrics: NULL (no cluster) or a list of STRUCT(platform, offer_pattern, fabric, internode_gbps_per_gpu,
-- node_counts INTEGER[], min_term_hours, joined_only BOOLEAN); a cluster's units are whole nodes (the
-- offer sells one node).
-- Columns: every judged_offers column, gpus_per_node, units_rented, plan_gpu_count, nodes, stock_known,
-- fabric and internode_gbps_per_gpu (NULL unless the shape joins nodes over a fabric), cluster_min_term_hours.
CREATE OR REPLACE MACRO plan_shapes(
    first_day, last_day, node_sizes, max_gpu_count, latest := FALSE, max_stale_hours := NULL, fabrics := NULL
) AS TABLE
WITH listed AS (
    SELECT unnest(
        CAST(fabrics AS STRUCT(
            platform VARCHAR, offer_pattern VARCHAR, fabric VARCHAR, internode_gbps_per_gpu DOUBLE,
            node_counts INTEGER[], min_term_hours DOUBLE, joined_only BOOLEAN
        )[]),
        recursive := true
    )
),
sized_offers AS MATERIALIZED (
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
    o.available_gpus IS NOT NULL AS stock_known,
    CAST(NULL AS VARCHAR) AS fabric,
    CAST(NULL AS DOUBLE) AS internode_gbps_per_gpu,
    CAST(NULL AS DOUBLE) AS cluster_min_term_hours
FROM sized_offers AS o,
    -- more than one unit only per GPU and on one node; the filter below bounds stock and size
    unnest(range(1, CASE WHEN o.price_per = 'gpu' THEN greatest(1, o.gpus_per_node // o.gpu_count) ELSE 1 END + 1))
        AS k(units_rented)
WHERE k.units_rented * o.gpu_count <= max_gpu_count
  AND (o.available_gpus IS NULL OR k.units_rented * o.gpu_count <= o.available_gpus)
  AND NOT EXISTS (
      SELECT 1 FROM listed AS f
      WHERE f.joined_only AND f.platform = o.platform AND regexp_full_match(o.offer_id, f.offer_pattern)
  )
UNION ALL BY NAME
-- whole nodes of a listed offer over its fabric (the table's patterns of a platform never overlap)
SELECT
    o.*,
    n.units_rented,
    n.units_rented * o.gpu_count AS plan_gpu_count,
    n.units_rented AS nodes,
    o.available_gpus IS NOT NULL AS stock_known,
    f.fabric,
    f.internode_gbps_per_gpu,
    f.min_term_hours AS cluster_min_term_hours
FROM sized_offers AS o
JOIN listed AS f
  ON f.platform = o.platform AND regexp_full_match(o.offer_id, f.offer_pattern)
, unnest(f.node_counts) AS n(units_rented)
WHERE o.gpu_count = o.gpus_per_node
  AND (o.available_gpus IS NULL OR n.units_rented * o.gpu_count <= o.available_gpus);
