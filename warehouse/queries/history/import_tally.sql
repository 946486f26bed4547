-- What a file read in SQL (history/import_observations.sql) staged in import_rows: rows kept, rows
-- refused and their distinct reasons, and the (platform, day)s the rows speak for.
SELECT
    count(*) AS rows_read,
    count(*) FILTER (reason IS NOT NULL) AS rows_refused,
    coalesce(list(DISTINCT reason) FILTER (reason IS NOT NULL), []) AS reasons,
    coalesce(list(DISTINCT {'platform': platform, 'day': CAST(day AS DATE)})
        FILTER (platform IS NOT NULL AND day IS NOT NULL), []) AS days
FROM import_rows
