-- The open dataset's plan changes of one day, as stored.
SELECT *
FROM plan_changes
WHERE change_date = $day
ORDER BY subject, job, model, method, ranking, change_type
