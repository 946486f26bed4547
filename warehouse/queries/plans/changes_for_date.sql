-- The plan changes recorded for one day, in a stable order.
SELECT *
FROM plan_changes
WHERE change_date = $change_date
ORDER BY model, method, ranking DESC, change_type
