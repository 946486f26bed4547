-- The (observation day, currency) pairs of a history import, for the shared FX step fx_day_rates.sql.
CREATE OR REPLACE TEMP VIEW fx_days AS
SELECT CAST(timezone('UTC', CAST(observed_at AS TIMESTAMPTZ)) AS DATE) AS observed_date, price_currency
FROM import_offers;
