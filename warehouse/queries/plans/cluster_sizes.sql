-- The clusters the day's offers can make (definitions/50_plan_shapes.sql joins them): per offer the
-- cluster table lists ($fabrics: plan_shapes' fabrics), its GPU model, its unit's GPUs, the fabric's
-- Gb/s per GPU and the node counts. Of the day's runs (day_runs), spot left out, as plan_shapes does.
-- Params: $plan_date, $fabrics.
SELECT DISTINCT o.gpu_model, o.gpu_count, f.internode_gbps_per_gpu, f.node_counts
FROM offers AS o
JOIN day_runs AS r ON r.crawl_id = o.crawl_id AND r.platform = o.platform AND o.run_day = r.run_day
JOIN (
    SELECT unnest(
        CAST($fabrics AS STRUCT(platform VARCHAR, offer_pattern VARCHAR, internode_gbps_per_gpu DOUBLE, node_counts INTEGER[])[]),
        recursive := true
    )
) AS f
  ON f.platform = o.platform AND regexp_full_match(o.offer_id, f.offer_pattern)
WHERE r.day = CAST($plan_date AS DATE)
  AND o.gpu_model IS NOT NULL
  AND o.pricing_type <> 'spot'
ORDER BY o.gpu_model, o.gpu_count, f.internode_gbps_per_gpu
