-- job_plan_changes as it was before the one change detector (migration 091): the job changes of
-- plan_changes in that table's columns, for queries written against it. New code reads plan_changes
-- WHERE subject = 'job'.
CREATE OR REPLACE VIEW job_plan_changes AS
SELECT
    change_date,
    job,
    change_type,
    old_platform,
    new_platform,
    old_gpu_model,
    new_gpu_model,
    old_gpu_count,
    new_gpu_count,
    old_measure_usd AS old_total_usd,
    new_measure_usd AS new_total_usd,
    pct_change,
    detail,
    computed_at
FROM plan_changes
WHERE subject = 'job';
