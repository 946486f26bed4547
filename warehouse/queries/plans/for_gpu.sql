-- The best plans on one GPU model ($gpu) of one day ($plan_date; NULL = the latest day with plans
-- that has begun: plan_day_reached):
-- both rankings of every (model, method) as `ranked_plans` picks them among the
-- day's candidates on that GPU, 'no_offer_fits' where none of it fits; optionally one model and/or
-- method (NULL = all), smallest model first.
SELECT *
FROM ranked_plans(
    coalesce(CAST($plan_date AS DATE), (SELECT max(plan_date) FROM cheapest_plans WHERE plan_day_reached(plan_date))), gpu := $gpu
)
WHERE ($model IS NULL OR model = $model)
  AND ($method IS NULL OR method = $method)
ORDER BY params NULLS LAST, model, method, ranking <> 'lowest_rent', ranking
