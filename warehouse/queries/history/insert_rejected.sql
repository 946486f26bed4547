-- Keep the rows a history import's reader refused before staging (temp view import_refused),
-- verbatim with the reason, under their run (runs already loaded are skipped). The staged rows
-- rejected by the shared checks go in with load/insert_rejected.sql.
INSERT INTO rejected_offers (crawl_id, platform, raw, reason, rejected_at)
SELECT f.crawl_id, f.platform, f.raw, f.reason, $rejected_at
FROM import_refused AS f
ANTI JOIN crawl_runs AS r ON r.crawl_id = f.crawl_id
