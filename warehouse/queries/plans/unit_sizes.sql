-- The unit sizes the day's offers are sold in, per GPU model: the job sizes a plan can take besides
-- cards picked on one node and whole nodes (see plans/candidates.sql). The day's runs (day_runs), a
-- carried crawl of a platform whose crawl failed included.
SELECT DISTINCT o.gpu_model, o.gpu_count
FROM offers AS o
JOIN day_runs AS r ON r.crawl_id = o.crawl_id AND r.platform = o.platform AND o.run_day = r.run_day
WHERE r.day = CAST($plan_date AS DATE)
  AND o.gpu_model IS NOT NULL
ORDER BY o.gpu_model, o.gpu_count
