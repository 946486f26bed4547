-- One row per crawl (or import) loaded, whatever its outcome: failed, skipped and empty crawls
-- are recorded too, so a gap in offers always has a visible cause.
INSERT INTO crawl_runs (
    crawl_id, platform, source, status, error, started_at, finished_at, items_yielded,
    items_rejected, offers_loaded, offline, source_file, loaded_at, read_sources
)
VALUES (
    $crawl_id, $platform, $source, $status, $error, $started_at, $finished_at, $items_yielded,
    $items_rejected, $offers_loaded, $offline, $source_file, $loaded_at, $read_sources
)
