-- One crawl_runs row per (platform, day) of a history import (registered frame import_runs),
-- whatever its outcome. Status: failed when no offer loaded (a header-only catalog is a failure
-- with its reason, never "zero offers"), partial when rows were refused or rejected beside loaded
-- ones, else ok. started_at/finished_at: the day the file states (00:00 UTC), so an old catalog
-- never passes for a newer crawl; loaded_at says when it was imported.
INSERT INTO crawl_runs (
    crawl_id, platform, source, status, error, started_at, finished_at, items_yielded,
    items_rejected, offers_loaded, offline, source_file, loaded_at
)
WITH counts AS (
    SELECT
        crawl_id,
        count(*) FILTER (reason IS NULL) AS offers_loaded,
        count(*) FILTER (reason IS NOT NULL) AS rejected
    FROM load_priced
    GROUP BY crawl_id
),
runs AS (
    SELECT
        r.*,
        coalesce(c.offers_loaded, 0) AS offers_loaded,
        coalesce(c.rejected, 0) + r.rows_refused AS items_rejected
    FROM import_runs AS r
    LEFT JOIN counts AS c USING (crawl_id)
    ANTI JOIN crawl_runs AS done ON done.crawl_id = r.crawl_id
)
SELECT
    crawl_id,
    platform,
    $source,
    CASE WHEN offers_loaded = 0 THEN 'failed' WHEN items_rejected > 0 THEN 'partial' ELSE 'ok' END,
    CASE
        WHEN offers_loaded = 0 THEN coalesce(problem, 'no offers loaded (' || items_rejected || ' rows refused or rejected)')
        WHEN items_rejected > 0 THEN items_rejected || ' row(s) refused or rejected, see rejected_offers'
    END,
    CAST(day AS TIMESTAMP),
    CAST(day AS TIMESTAMP),
    items_yielded,
    items_rejected,
    offers_loaded,
    FALSE,
    $source_file,
    $loaded_at
FROM runs
