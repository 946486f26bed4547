-- The runs of a staged history import, one per (platform, day) the file speaks for (registered frame
-- import_days), with or without rows (a header-only catalog is a run that failed). crawl_id hashes
-- the run's content: the source, platform and day, how many rows (offers and refused rows) and the
-- sums of their MD5s (import_rows.md5: each reader's, of the row as it read it), so it does not
-- depend on the order of the file's rows or how it was read, and one day imported twice is one run.
-- Params: $source, $problem.
CREATE OR REPLACE TEMP TABLE import_runs AS
WITH per_run AS (
    SELECT
        platform,
        day,
        count(*) AS items_yielded,
        count(*) FILTER (reason IS NOT NULL) AS rows_refused,
        sum(CAST(md5 >> 64 AS UBIGINT)) AS upper_sum,
        sum(CAST(md5 & CAST(18446744073709551615 AS UHUGEINT) AS UBIGINT)) AS lower_sum
    FROM import_rows
    GROUP BY platform, day
)
SELECT
    sha256(concat_ws(chr(10), CAST($source AS VARCHAR), d.platform, d.day,
        coalesce(r.items_yielded, 0), coalesce(r.upper_sum, 0), coalesce(r.lower_sum, 0))) AS crawl_id,
    d.platform,
    CAST(d.day AS DATE) AS day,
    coalesce(r.items_yielded, 0) AS items_yielded,
    coalesce(r.rows_refused, 0) AS rows_refused,
    CAST($problem AS VARCHAR) AS problem
FROM import_days AS d
LEFT JOIN per_run AS r USING (platform, day);
