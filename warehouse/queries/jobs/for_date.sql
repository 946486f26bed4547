-- The job plans of one day ($plan_date; NULL = the latest day with job plans), by job and rank.
SELECT *
FROM job_plans
WHERE plan_date = coalesce(CAST($plan_date AS DATE), (SELECT max(plan_date) FROM job_plans))
ORDER BY job, rank
