-- The history rule's vote tables (migration 093) without their primary keys, rows in run-day order.
-- Why: a DuckDB 2.0.1 CHECKPOINT after rows of an indexed table were deleted rewrites that table's
-- ART index, so its cost grew with history: price_reference_votes replaces a day's votes at every
-- load (load/price_references.sql), and on a year of history (757k votes) each such checkpoint wrote
-- 8.1 MB against 0.53 MB for the same table unindexed; an insert of 30 rows into gpu_price_votes
-- (755k rows) 1.84 MB against 0.53 MB (bench/README.md, the intraday watch cycle). Nothing reads
-- them by key: the keys stay unique by construction, which the loads' tests check against a
-- computation from scratch: a crawl is loaded once (crawl_runs.crawl_id is its primary key) and its
-- votes are one GROUP BY of its offers (load/insert_offers.sql); a day's reference votes are deleted
-- and inserted again in one transaction. Run-day order keeps a window's rows in few row groups.
-- drops data: none; both tables are copied whole into their unindexed twins before the old ones go
CREATE TABLE gpu_price_votes_unindexed (
    crawl_id                   VARCHAR NOT NULL,  -- unique with gpu_model and pricing_type
    platform                   VARCHAR NOT NULL,
    run_day                    DATE NOT NULL,
    gpu_model                  VARCHAR NOT NULL,
    pricing_type               VARCHAR NOT NULL,
    cheapest_usd_per_gpu_hour  DOUBLE NOT NULL,  -- the crawl's cheapest whole-card offer of the model and type
    offers                     BIGINT NOT NULL
);
INSERT INTO gpu_price_votes_unindexed
SELECT * FROM gpu_price_votes ORDER BY run_day, crawl_id, gpu_model, pricing_type;
DROP TABLE gpu_price_votes;
ALTER TABLE gpu_price_votes_unindexed RENAME TO gpu_price_votes;

CREATE TABLE price_reference_votes_unindexed (
    run_day                DATE NOT NULL,       -- the day judged: its window is the 30 days up to it; unique with
                                                -- gpu_model, pricing_type and platform
    gpu_model              VARCHAR NOT NULL,
    pricing_type           VARCHAR NOT NULL,
    platform               VARCHAR NOT NULL,
    vote_usd_per_gpu_hour  DOUBLE NOT NULL,     -- median over the window's days of the platform's daily cheapest
    days                   INTEGER NOT NULL     -- days of the window the platform priced the card
);
INSERT INTO price_reference_votes_unindexed
SELECT * FROM price_reference_votes ORDER BY run_day, gpu_model, pricing_type, platform;
DROP TABLE price_reference_votes;
ALTER TABLE price_reference_votes_unindexed RENAME TO price_reference_votes;
