-- What a job watch compares with its threshold: per day of $days, the job's best plan (job_plans,
-- rank 1, with a plan) and its total paid in USD.
SELECT plan_date AS day, total_usd, platform, gpu_model, gpu_count
FROM job_plans
WHERE job = $job
  AND rank = 1
  AND status = 'ok'
  AND list_contains(CAST($days AS DATE[]), plan_date)
ORDER BY plan_date
