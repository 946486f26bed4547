-- The refused rows of a staged history import under their runs (history/import_runs.sql), as
-- history/insert_rejected.sql reads them.
CREATE OR REPLACE TEMP VIEW import_refused AS
SELECT r.crawl_id, f.platform, f.raw, f.reason
FROM import_rows AS f
JOIN import_runs AS r ON r.platform = f.platform AND CAST(r.day AS VARCHAR) = f.day
WHERE f.reason IS NOT NULL;
