-- Stage one crawl feed in the temp table load_staged: its records as feed_records reads them,
-- typed and checked by checked_offers, the one rule set for every offer, crawled or imported
-- (definitions/00_offer_records.sql; history/stage_imported.sql stages an import the same way).
-- Params: $feed; $platform, $crawl_id, $source of the crawl; $started_at (its summary's, UTC, may be
-- NULL) and $loaded_at, whose run_day_of is offers.run_day.
CREATE OR REPLACE TEMP TABLE load_staged AS
WITH records AS (
    SELECT *
    FROM feed_records(
        $feed, $crawl_id, $source, run_day_of(CAST($started_at AS TIMESTAMP), CAST($loaded_at AS TIMESTAMP))
    )
)
SELECT * FROM checked_offers('records', CAST($platform AS VARCHAR));
