-- The day's cheapest plans: both rankings of every (model, method) asked (`ranked_plans`, migration
-- 052: the rules and their tie-breaks), stored for the day.
-- Params: $plan_date, $computed_at.
INSERT INTO cheapest_plans BY NAME
SELECT *, CAST($computed_at AS TIMESTAMP) AS computed_at
FROM ranked_plans(CAST($plan_date AS DATE))
