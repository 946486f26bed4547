-- The FX rate of each (observation day, quoted currency) in the temp table fx_days, into the temp
-- table fx_day_rates: the ECB rate of that day or the nearest earlier one, for the currency and for
-- CNY; fx_date is the older of the two, fx_source names both when they differ. One rule for every
-- loader (crawls: loading.py; history imports: imports.py). The ASOF joins run on the distinct
-- pairs, a handful of rows; offers then take their rate with an equality join.
CREATE OR REPLACE TEMP TABLE fx_day_rates AS
WITH cny AS (
    SELECT rate_date, units_per_usd, source FROM fx_rates WHERE currency = 'CNY'
)
SELECT
    days.observed_date,
    days.price_currency,
    rate.units_per_usd,
    cny.units_per_usd AS cny_per_usd,
    least(rate.rate_date, cny.rate_date) AS fx_date,
    CASE WHEN rate.source = cny.source THEN rate.source ELSE rate.source || '; CNY: ' || cny.source END AS fx_source
FROM (SELECT DISTINCT observed_date, price_currency FROM fx_days) AS days
ASOF LEFT JOIN fx_rates AS rate
    ON rate.currency = days.price_currency AND days.observed_date >= rate.rate_date
ASOF LEFT JOIN cny ON days.observed_date >= cny.rate_date;
