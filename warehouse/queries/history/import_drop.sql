-- Drop a staged history import's temp objects (history/import_staging.sql, import_runs.sql,
-- import_views.sql), loaded or not.
DROP VIEW IF EXISTS import_offers;
DROP VIEW IF EXISTS import_refused;
DROP TABLE IF EXISTS import_runs;
DROP TABLE IF EXISTS import_offer_rows;
DROP TABLE IF EXISTS import_refused_rows;
