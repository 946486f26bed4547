-- The open dataset's daily plans of one day, as stored.
SELECT *
FROM cheapest_plans
WHERE plan_date = $day
ORDER BY model, method, ranking
