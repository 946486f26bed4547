-- The first day after $day that has cheapest plans (NULL when none).
SELECT min(plan_date) AS plan_date
FROM cheapest_plans
WHERE plan_date > $day
