-- Per platform, its latest usable crawl of our own (history imports are history, not what is on
-- offer now). "Latest" is the crawl's own time (usable_runs.crawled_at), so loading an old crawl
-- file later does not replace a newer one. A run dated ahead of now by more than
-- clock_skew_tolerance() (the crawling host's clock was ahead as it loaded too) is not the latest
-- until then; its offers stay in `offers` and in the history of their run day.
CREATE OR REPLACE VIEW latest_runs AS
SELECT platform, crawl_id, status, run_day, crawled_at, offline
FROM usable_runs
WHERE source = 'crawl'
  AND crawled_at <= CAST(now() AT TIME ZONE 'UTC' AS TIMESTAMP) + clock_skew_tolerance()
QUALIFY row_number() OVER (PARTITION BY platform ORDER BY crawled_at DESC, loaded_at DESC, crawl_id) = 1;
