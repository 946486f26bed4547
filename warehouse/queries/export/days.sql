-- Every day the open dataset can hold: a day with offers or with plans, oldest first.
SELECT DISTINCT day FROM (
    SELECT DISTINCT observed_date AS day FROM offers
    UNION SELECT DISTINCT plan_date FROM cheapest_plans
)
ORDER BY day
