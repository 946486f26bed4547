-- The job plans of one day ($plan_date; NULL = the latest day with job plans that
-- has begun: plan_day_reached), by job and rank.
SELECT *
FROM job_plans
WHERE plan_date = coalesce(CAST($plan_date AS DATE), (SELECT max(plan_date) FROM job_plans WHERE plan_day_reached(plan_date)))
ORDER BY job, rank
