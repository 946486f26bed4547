-- The day the digest compares with: the previous day that has plans, as plan_changes does.
SELECT max(plan_date) AS previous_date
FROM cheapest_plans
WHERE plan_date < $day
