-- Keep what a history import could not load, verbatim with the reason, under its run: rows the
-- importer refused before pricing (registered frame import_refused) and priced rows rejected here.
INSERT INTO rejected_offers (crawl_id, platform, raw, reason, rejected_at)
SELECT crawl_id, platform, item_json, reason, $rejected_at
FROM history_priced
WHERE reason IS NOT NULL
UNION ALL
SELECT f.crawl_id, f.platform, f.raw, f.reason, $rejected_at
FROM import_refused AS f
ANTI JOIN crawl_runs AS r ON r.crawl_id = f.crawl_id
