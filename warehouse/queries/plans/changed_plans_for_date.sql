-- The changed plans of one day (the view changed_plans: one row per plan change, its kinds joined),
-- of $subject ('plan' | 'job'; NULL: both), jobs first, in the order changes_for_date lists them.
SELECT
    subject,
    job,
    model,
    method,
    ranking,
    array_to_string(change_types, ', ') AS changes,
    array_to_string(coalesce(details, []), '; ') AS detail
FROM changed_plans
WHERE change_date = $change_date AND ($subject IS NULL OR subject = $subject)
ORDER BY subject = 'plan', job, model, method, ranking <> 'lowest_rent', ranking
