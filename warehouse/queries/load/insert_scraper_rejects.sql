-- The quotes the spider rejected (temp table load_scraper_rejects, see
-- load/stage_scraper_rejects.sql) into rejected_offers: each record verbatim, with its reason.
INSERT INTO rejected_offers (crawl_id, platform, raw, reason, rejected_at)
SELECT $crawl_id, $platform, line, reason, $rejected_at
FROM load_scraper_rejects
