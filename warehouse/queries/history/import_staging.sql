-- The staging table of a history import (warehouse.imports.ImportStaging): every row of the file a
-- reader passed on, appended as it is read, so the process holds at most one chunk and DuckDB spills
-- the rest to disk. An offer is a record (`item`, of the type feed_records gives a crawl feed's
-- records: offer_record); a row the reader refused has `raw` (the row as read) and `reason` (never
-- NULL: it tells the two apart) instead. platform and day (YYYY-MM-DD) place each row in its
-- (platform, day) run; md5 is the row's share of the run's content id (history/import_runs.sql).
CREATE OR REPLACE TEMP TABLE import_rows AS
SELECT
    CAST(NULL AS VARCHAR) AS platform,
    CAST(NULL AS VARCHAR) AS day,
    offer_record() AS item,
    CAST(NULL AS UHUGEINT) AS md5,
    CAST(NULL AS VARCHAR) AS raw,
    CAST(NULL AS VARCHAR) AS reason
LIMIT 0;
