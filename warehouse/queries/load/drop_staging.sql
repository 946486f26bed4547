-- Drop one load's temp objects (load_stage_feed or history_stage_imported, load_price_staged) once
-- its inserts are done.
DROP TABLE load_rejected;
DROP VIEW load_priced;
DROP TABLE fx_day_rates;
DROP VIEW fx_days;
DROP TABLE load_duplicates;
DROP TABLE load_staged;
