-- For people (`gpuplan sql`) and ad-hoc plans: per platform, the offers that stand for it now
-- (latest_runs, standing_offers): its latest crawl's, and where that crawl did not stand for all
-- (failed, skipped, empty, partial) its last good crawl's, marked stale, for what it did not read, so
-- an outage never reads as "sold out". Not bounded by GPUPLAN_STALE_HOURS (a view knows no settings):
--   crawled_at   when the offer's crawl crawled
--   stale        TRUE: carried from the last good crawl; stale_hours how much older its prices are than
--                the attempt (for a crawl not carried, than its crawl: its catalog's age, else 0)
CREATE OR REPLACE VIEW latest_offers AS
SELECT * EXCLUDE (status, offline, read_by)
FROM standing_offers('latest_runs');
