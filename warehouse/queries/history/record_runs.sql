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
    -- every staged record loads but those load_rejected holds (an import's records are never
    -- unparsed): counted from the two tables, not by pricing the load_priced view again
    SELECT
        s.crawl_id,
        s.staged - coalesce(r.rejected, 0) AS offers_loaded,
        coalesce(r.rejected, 0) AS rejected
    FROM (SELECT crawl_id, count(*) AS staged FROM load_staged GROUP BY crawl_id) AS s
    LEFT JOIN (SELECT crawl_id, count(*) AS rejected FROM load_rejected GROUP BY crawl_id) AS r USING (crawl_id)
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
