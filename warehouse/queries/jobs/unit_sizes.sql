-- The unit sizes the offers come in, per platform and GPU model: with cards picked on one node, the
-- GPU counts to size for job plans (warehouse.requirements.plan_gpu_counts), and which
-- platforms and GPUs a job's scope has on offer. The offers of the runs job plans price from
-- (day_runs of $plan_date, or with $latest each platform's latest usable crawl). A superset of what
-- plan_shapes rents, as the daily plans/unit_sizes.sql is: the price floor is judged there (a second
-- pass over the offers' medians here would cost more than sizing a count no plan takes).
-- With each, the fabric a listed offer joins over (its Gb/s per GPU and node counts, from $fabrics: the
-- cluster table's rows, plan_shapes' fabrics; NULL for an offer the table does not list).
-- Params: $plan_date, $latest, $fabrics.
WITH runs AS (
    SELECT crawl_id, platform, run_day FROM latest_runs WHERE $latest
    UNION ALL
    SELECT crawl_id, platform, run_day FROM day_runs WHERE NOT $latest AND day = CAST($plan_date AS DATE)
)
SELECT DISTINCT o.platform, o.gpu_model, o.gpu_count, f.internode_gbps_per_gpu, f.node_counts
FROM offers AS o
JOIN runs AS r ON r.crawl_id = o.crawl_id AND r.platform = o.platform AND o.run_day = r.run_day
LEFT JOIN (
    SELECT unnest(
        CAST($fabrics AS STRUCT(platform VARCHAR, offer_pattern VARCHAR, internode_gbps_per_gpu DOUBLE, node_counts INTEGER[])[]),
        recursive := true
    )
) AS f
  ON f.platform = o.platform AND regexp_full_match(o.offer_id, f.offer_pattern)
WHERE o.gpu_model IS NOT NULL
  AND o.gpu_count >= 1
  AND o.pricing_type <> 'spot'
ORDER BY o.platform, o.gpu_model, o.gpu_count
