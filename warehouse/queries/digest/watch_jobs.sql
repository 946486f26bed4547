-- What each job watch compares with its threshold, all in one query: per watch ($watch_nos, each
-- with its job in $jobs) and day of $days, the job's best plan (job_plans, rank 1, with a plan) and
-- its total paid in USD.
WITH watches AS (
    SELECT unnest(CAST($watch_nos AS INTEGER[])) AS watch_no, unnest(CAST($jobs AS VARCHAR[])) AS job
)
SELECT w.watch_no, p.plan_date AS day, p.total_usd, p.platform, p.gpu_model, p.gpu_count
FROM watches AS w
JOIN job_plans AS p ON p.job = w.job
WHERE p.rank = 1
  AND p.status = 'ok'
  AND list_contains(CAST($days AS DATE[]), p.plan_date)
ORDER BY w.watch_no, p.plan_date
