-- For people (`gpuplan sql`) and ad-hoc plans: per platform, the offers of its latest usable crawl
-- (latest_runs). A failed, skipped or empty crawl after it keeps it visible, so an outage never
-- reads as "sold out".
CREATE OR REPLACE VIEW latest_offers AS
SELECT o.*, r.crawled_at
FROM offers AS o
JOIN latest_runs AS r ON r.crawl_id = o.crawl_id AND r.platform = o.platform AND o.run_day = r.run_day;
