-- The changed plans: one row per plan change, as the digest reports and every count of "changes"
-- counts them. plan_changes keeps a row per kind of change (a move to another offer is a new
-- platform, a new GPU and a price change at once); a changed plan is a job's (subject 'job') or a
-- (model, method, ranking)'s (subject 'plan') on one change_date, with its kinds and their details,
-- both in change_type order.
CREATE OR REPLACE VIEW changed_plans AS
SELECT
    change_date,
    subject,
    job,
    model,
    method,
    ranking,
    list(DISTINCT change_type ORDER BY change_type) AS change_types,
    list(detail ORDER BY change_type) FILTER (detail IS NOT NULL) AS details
FROM plan_changes
GROUP BY change_date, subject, job, model, method, ranking;
