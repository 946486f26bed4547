-- One row per crawl (or import) loaded, whatever its outcome: failed, skipped and empty crawls
-- are recorded too, so a gap in offers always has a visible cause. catalog_date: the oldest catalog
-- date its offers (loaded before it, in the same transaction) name, the age the carry rule judges;
-- read on their run_day (run_day_of the same $started_at and $loaded_at they were staged with), so
-- the scan is pruned to that day's row groups instead of reading every crawl's offers.
INSERT INTO crawl_runs (
    crawl_id, platform, source, status, error, started_at, finished_at, items_yielded,
    items_rejected, offers_loaded, offline, source_file, loaded_at, read_sources, catalog_date
)
VALUES (
    $crawl_id, $platform, $source, $status, $error, $started_at, $finished_at, $items_yielded,
    $items_rejected, $offers_loaded, $offline, $source_file, $loaded_at, $read_sources,
    (
        SELECT min(catalog_date)
        FROM offers
        WHERE run_day = run_day_of(CAST($started_at AS TIMESTAMP), CAST($loaded_at AS TIMESTAMP))
            AND crawl_id = $crawl_id
            AND platform = $platform
    )
)
