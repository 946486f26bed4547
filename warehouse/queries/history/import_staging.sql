-- The staging tables of a history import read in chunks (warehouse.history.ImportStaging): every
-- chunk's offers and refused rows are appended here, so the reader holds one chunk at a time and
-- DuckDB spills the rest to disk. Offer fields are kept as text, as history/stage_imported.sql
-- casts them; `day` (YYYY-MM-DD) places each row in its (platform, day) run.
CREATE OR REPLACE TEMP TABLE import_offer_rows (
    platform VARCHAR, day VARCHAR, item_json VARCHAR, offer_id VARCHAR, region VARCHAR,
    gpu_name_raw VARCHAR, gpu_model VARCHAR, gpu_form VARCHAR, gpu_memory_gb VARCHAR, gpu_count VARCHAR,
    price_amount VARCHAR, price_currency VARCHAR, price_per VARCHAR, billing_period VARCHAR,
    min_term_periods VARCHAR, pricing_type VARCHAR, available_gpus VARCHAR, source_url VARCHAR,
    observed_at VARCHAR
);
CREATE OR REPLACE TEMP TABLE import_refused_rows (platform VARCHAR, day VARCHAR, raw VARCHAR, reason VARCHAR);
