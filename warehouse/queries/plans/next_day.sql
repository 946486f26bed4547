-- The first day after $day with best plans of $subject ('plan' | 'job'; NULL when none).
SELECT min(plan_date) AS plan_date
FROM best_plans
WHERE subject = $subject AND plan_date > $day
