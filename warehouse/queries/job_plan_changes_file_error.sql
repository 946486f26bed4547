-- A jobs file that cannot be read, filed as the day's one job plan change so the digest says so.
-- Params: $change_date, $job, $detail (the error, with the file and line), $computed_at.
INSERT INTO job_plan_changes (change_date, job, change_type, detail, computed_at)
VALUES (CAST($change_date AS DATE), $job, 'jobs_file_error', $detail, CAST($computed_at AS TIMESTAMP))
