-- The unit sizes a job's offers come in, per GPU model: with cards picked on one node, the GPU counts
-- to size for a job plan (warehouse.plan_requirements.plan_gpu_counts). The offers are the plannable
-- ones a job plan prices from (judged_offers: the day's, or with $latest each platform's latest
-- usable crawl), on the job's platforms and GPUs (NULL: any).
-- Params: $plan_date, $latest, $platforms, $gpus.
SELECT DISTINCT gpu_model, gpu_count
FROM judged_offers(CAST($plan_date AS DATE), CAST($plan_date AS DATE), latest := $latest)
WHERE plannable
  AND ($platforms IS NULL OR list_contains($platforms, platform))
  AND ($gpus IS NULL OR list_contains($gpus, gpu_model))
ORDER BY gpu_model, gpu_count
