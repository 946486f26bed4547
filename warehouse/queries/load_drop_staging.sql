-- Drop one load's temp objects (load_stage_feed, load_price_staged) once its inserts are done.
DROP VIEW load_priced;
DROP TABLE load_day_rates;
DROP TABLE load_duplicates;
DROP TABLE load_staged;
