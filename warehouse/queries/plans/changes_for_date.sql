-- The changes of $subject ('plan' | 'job') recorded for one day, in a stable order.
SELECT *
FROM plan_changes
WHERE change_date = $change_date AND subject = $subject
ORDER BY job, model, method, ranking <> 'lowest_rent', ranking, change_type
