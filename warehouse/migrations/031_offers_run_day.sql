-- Each offer carries the day of its run, `run_day`: the value daily_runs.day (migration 030)
-- computes for the offer's crawl_runs row, CAST(coalesce(started_at, loaded_at) AS DATE); both
-- loaders set it (load_insert_offers.sql, history_insert_offers.sql). daily_run_offers joins on it
-- as well as on crawl_id, so a trend's day range reaches the offers scan and skips the row groups
-- of other days: crawl_id is a content hash, which prunes nothing (a 90-day trend over two years
-- read 122 of 122 row groups, 16 with run_day; bench/README.scale.md). observed_date cannot stand
-- in for it: an offline replay keeps the snapshot's own date, far from its run's day.
ALTER TABLE offers ADD COLUMN run_day DATE;

-- Existing offers take their run's day; every offer has its crawl_runs row (loaded together).
UPDATE offers
SET run_day = CAST(coalesce(r.started_at, r.loaded_at) AS DATE)
FROM crawl_runs AS r
WHERE r.crawl_id = offers.crawl_id;

-- One row per offer of the run that stands for its platform and day.
CREATE OR REPLACE VIEW daily_run_offers AS
SELECT
    r.day,
    o.*
FROM daily_runs AS r
JOIN offers AS o ON o.crawl_id = r.crawl_id AND o.platform = r.platform AND o.run_day = r.day;
