-- Stage the offers of a history import (import_rows, every run of one file at once, under its runs
-- in import_runs) in the temp table load_staged: records as feed_records gives a crawl's, typed and
-- checked by checked_offers and later priced by load/price_staged.sql, as a crawl's are: crawled and
-- imported offers pass one rule set (definitions/00_offer_records.sql). Runs already in crawl_runs
-- are skipped. run_day: the day the file states for the run, as history/record_runs.sql records it
-- in started_at. Params: $source ('import:<format>').
CREATE OR REPLACE TEMP TABLE load_staged AS
WITH records AS (
    SELECT
        r.crawl_id,
        CAST($source AS VARCHAR) AS source,
        CAST(r.day AS DATE) AS run_day,
        o.item,
        FALSE AS unparsed
    FROM import_rows AS o
    JOIN import_runs AS r ON r.platform = o.platform AND CAST(r.day AS VARCHAR) = o.day
    ANTI JOIN crawl_runs AS done ON done.crawl_id = r.crawl_id
    WHERE o.reason IS NULL
)
SELECT * FROM checked_offers('records', CAST(NULL AS VARCHAR));
