-- Of the jobs asked ($jobs), those with neither a plan nor a stated reason on $plan_date: a job the
-- daily run should have planned and did not (an asset check fails on any).
SELECT j.job
FROM unnest(CAST($jobs AS VARCHAR[])) AS j(job)
ANTI JOIN job_plans AS p
  ON p.plan_date = $plan_date
 AND p.job = j.job
 AND p.rank = 1
 AND (p.status = 'ok' OR p.reason IS NOT NULL)
ORDER BY j.job
