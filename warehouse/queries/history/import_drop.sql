-- Drop a staged history import's temp objects (history/import_staging.sql, import_runs.sql,
-- import_views.sql, import_observations.sql), loaded or not.
DROP VIEW IF EXISTS import_refused;
DROP TABLE IF EXISTS import_runs;
DROP TABLE IF EXISTS import_rows;
DROP MACRO IF EXISTS observations_price;
DROP MACRO IF EXISTS observations_count;
