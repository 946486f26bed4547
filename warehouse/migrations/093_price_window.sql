-- Plausibility that does not depend on the order data arrives in (issue 27, item 3). The history
-- floor judged each offer on load against the cheapest price loaded so far (gpu_price_seen): load
-- the SkyPilot Lambda catalogs before the observations and three Vast A100 spot rows were refused,
-- load them after and an H200 at 0.06 USD/h was kept. Now every priced offer loads, and it is judged
-- when it is read (judged_offers, definitions/40_judged_offers.sql) against the median of the other
-- platforms' prices of the card over a window of days (definitions/00_price_window.sql), which is
-- the same whatever order the days were loaded in.
--
-- Two tables keep that median cheap to read, both a function of the offers alone:
--   gpu_price_votes        per crawl, GPU model and pricing type: its cheapest price per GPU-hour
--                          (appended by the one insert both loaders share, load/insert_offers.sql)
--   price_reference_votes  per run day, GPU model, pricing type and platform: the platform's vote
--                          for that day, the median over the window's days of its daily cheapest
--                          (runs that worked), recomputed for the days a load touches
--                          (load/price_references.sql), never scanned from `offers`.
-- drops data: gpu_price_seen was derived from offers (the running minimum of the old rule); nothing else reads it
DROP VIEW IF EXISTS gpu_price_references;
DROP MACRO IF EXISTS history_price_problem;
DROP MACRO IF EXISTS history_price_share;
DROP TABLE gpu_price_seen;

CREATE TABLE gpu_price_votes (
    crawl_id                   VARCHAR NOT NULL,
    platform                   VARCHAR NOT NULL,
    run_day                    DATE NOT NULL,
    gpu_model                  VARCHAR NOT NULL,
    pricing_type               VARCHAR NOT NULL,
    cheapest_usd_per_gpu_hour  DOUBLE NOT NULL,  -- the crawl's cheapest whole-card offer of the model and type
    offers                     BIGINT NOT NULL,
    PRIMARY KEY (crawl_id, gpu_model, pricing_type)
);

CREATE TABLE price_reference_votes (
    run_day                DATE NOT NULL,       -- the day judged: its window is the 30 days up to it
    gpu_model              VARCHAR NOT NULL,
    pricing_type           VARCHAR NOT NULL,
    platform               VARCHAR NOT NULL,
    vote_usd_per_gpu_hour  DOUBLE NOT NULL,     -- median over the window's days of the platform's daily cheapest
    days                   INTEGER NOT NULL,    -- days of the window the platform priced the card
    PRIMARY KEY (run_day, gpu_model, pricing_type, platform)
);

-- The offers loaded before this migration (the rules of load/insert_offers.sql and of the macro
-- price_window_votes, spelled out: a migration uses no macro). Offers on the books passed the
-- plausible range when they loaded.
INSERT INTO gpu_price_votes
SELECT crawl_id, platform, run_day, gpu_model, pricing_type, min(price_usd_per_gpu_hour), count(*)
FROM offers
WHERE gpu_model IS NOT NULL
  AND gpu_frac IS NULL
  AND price_usd_per_gpu_hour IS NOT NULL
GROUP BY crawl_id, platform, run_day, gpu_model, pricing_type;

INSERT INTO price_reference_votes
WITH daily AS (
    SELECT v.platform, v.run_day, v.gpu_model, v.pricing_type, min(v.cheapest_usd_per_gpu_hour) AS cheapest
    FROM gpu_price_votes AS v
    JOIN crawl_runs AS r USING (crawl_id)
    WHERE r.status IN ('ok', 'partial')
    GROUP BY v.platform, v.run_day, v.gpu_model, v.pricing_type
),
days AS (
    SELECT DISTINCT run_day FROM gpu_price_votes
)
SELECT w.run_day, d.gpu_model, d.pricing_type, d.platform, median(d.cheapest), count(*)
FROM days AS w
JOIN daily AS d ON d.run_day BETWEEN w.run_day - 29 AND w.run_day
GROUP BY w.run_day, d.gpu_model, d.pricing_type, d.platform;

-- Why an offer was left out of a day's plans, in words (the price floor's or the history's).
ALTER TABLE plan_excluded_offers ADD COLUMN reason VARCHAR;
