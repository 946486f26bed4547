-- Runs whose offers can stand for their platform: they worked and loaded offers (a failed or empty
-- run never hides earlier offers, nor shows a platform as sold out). An offline run (the bundled
-- demo snapshots, `gpuplan refresh --offline`) counts only for a platform that has never been
-- crawled live with offers: demo data never poses as live data, whatever the order of the runs.
-- Each with its run_day (run_day_of), crawled_at (crawled_at_of: the crawl's own time, capped by
-- loaded_at) and priced_at (priced_at_of: when its prices are from, its catalog's date if older).
CREATE OR REPLACE VIEW usable_runs AS
WITH live_platforms AS (
    SELECT DISTINCT platform
    FROM crawl_runs
    WHERE run_worked(status) AND offers_loaded > 0 AND NOT offline
)
SELECT
    r.*,
    run_day_of(r.started_at, r.loaded_at) AS run_day,
    crawled_at_of(r.finished_at, r.started_at, r.loaded_at) AS crawled_at,
    priced_at_of(crawled_at_of(r.finished_at, r.started_at, r.loaded_at), r.catalog_date) AS priced_at
FROM crawl_runs AS r
WHERE run_worked(r.status)
  AND r.offers_loaded > 0
  AND (NOT r.offline OR r.platform NOT IN (SELECT platform FROM live_platforms));
