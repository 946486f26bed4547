-- The unit sizes the day's offers are sold in, per GPU model: the job sizes a plan can take besides
-- cards picked on one node and whole nodes (see plans/candidates.sql).
SELECT DISTINCT o.gpu_model, o.gpu_count
FROM offers AS o
JOIN plan_crawls AS c ON c.crawl_id = o.crawl_id AND c.platform = o.platform
WHERE c.plan_date = $plan_date
  AND run_worked(c.status)
  AND o.gpu_model IS NOT NULL
ORDER BY o.gpu_model, o.gpu_count
