-- Every (model, method, ranking) asked for that has no row in the day's cheapest plans.
-- A day with plans has a row for each, 'no_offer_fits' included; a missing row is a pipeline fault.
SELECT a.model, m.method, r.ranking
FROM unnest($models) AS a(model)
CROSS JOIN unnest($methods) AS m(method)
CROSS JOIN unnest($rankings) AS r(ranking)
ANTI JOIN cheapest_plans AS p
  ON p.plan_date = $plan_date
 AND p.model = a.model
 AND p.method = m.method
 AND p.ranking = r.ranking
ORDER BY a.model, m.method, r.ranking
