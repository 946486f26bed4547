-- The open dataset's offers of one day (observed_date, UTC): every stored offer, as stored, in a
-- fixed order so that the same rows always make the same file.
SELECT *
FROM offers
WHERE observed_date = $day
ORDER BY platform, crawl_id, offer_id, pricing_type, billing_period, observed_at, region
