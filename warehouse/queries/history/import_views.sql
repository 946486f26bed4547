-- The staged rows of a history import under their runs (history/import_runs.sql), as the bulk load
-- (history/stage_imported.sql, history/insert_rejected.sql) reads them.
CREATE OR REPLACE TEMP VIEW import_offers AS
SELECT r.crawl_id, o.*
FROM import_offer_rows AS o
JOIN import_runs AS r ON r.platform = o.platform AND CAST(r.day AS VARCHAR) = o.day;
CREATE OR REPLACE TEMP VIEW import_refused AS
SELECT r.crawl_id, f.*
FROM import_refused_rows AS f
JOIN import_runs AS r ON r.platform = f.platform AND CAST(r.day AS VARCHAR) = f.day;
