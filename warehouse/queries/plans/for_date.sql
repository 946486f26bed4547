-- The cheapest plans of one day ($plan_date; NULL = the latest day with plans that has begun: plan_day_reached), optionally for one
-- model and/or one method (NULL = all), smallest model first.
SELECT *
FROM cheapest_plans
WHERE plan_date = coalesce(CAST($plan_date AS DATE), (SELECT max(plan_date) FROM cheapest_plans WHERE plan_day_reached(plan_date)))
  AND ($model IS NULL OR model = $model)
  AND ($method IS NULL OR method = $method)
ORDER BY params NULLS LAST, model, method, ranking <> 'lowest_rent', ranking
