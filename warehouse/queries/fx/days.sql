-- The (observation day, currency) pairs of the staged offers (temp table load_staged) that load,
-- for the shared FX step fx/day_rates.sql.
CREATE OR REPLACE TEMP VIEW fx_days AS
SELECT observed_date, price_currency FROM load_staged WHERE reason IS NULL;
