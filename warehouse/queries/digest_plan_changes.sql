-- What changed in the cheapest plans of one day, as the plans pipeline recorded it,
-- in the plans' order (smallest model first).
SELECT
    c.model,
    c.method,
    c.ranking,
    c.change_type,
    c.old_value,
    c.new_value,
    c.old_rent_usd_per_month,
    c.new_rent_usd_per_month,
    c.pct_change,
    c.detail
FROM plan_changes AS c
LEFT JOIN cheapest_plans AS p
    ON p.plan_date = c.change_date AND p.model = c.model AND p.method = c.method AND p.ranking = c.ranking
WHERE c.change_date = $change_date
ORDER BY p.params NULLS LAST, c.model, c.method, c.ranking DESC, c.change_type
