-- Add ECB reference rates (registered frame `ecb_rates`: rate_date, currency, units_per_eur)
-- to fx_rates as units per 1 USD. The ECB quotes every currency per 1 EUR, so
--   units_per_usd(C) = (C per EUR) / (USD per EUR)   -- EUR itself: 1 / (USD per EUR); USD: 1.
-- Days already stored are kept (INSERT OR IGNORE on the (rate_date, currency) key); returns
-- the number of rows added.
INSERT OR IGNORE INTO fx_rates (rate_date, currency, units_per_usd, source)
SELECT rate.rate_date, rate.currency, rate.units_per_eur / usd.units_per_eur, $source
FROM ecb_rates AS rate
JOIN ecb_rates AS usd ON usd.rate_date = rate.rate_date AND usd.currency = 'USD'
