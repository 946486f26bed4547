-- Keep price_reference_votes (the history rule's votes, definitions/00_price_window.sql) equal to
-- what the offers say, after a load added votes (temp table load_vote_days, load/insert_offers.sql)
-- and recorded its runs (a vote counts once its run worked). A day's votes read the
-- price_window_days() days up to it, so the days to recompute are the days with votes from each
-- loaded run day to the end of its window: a daily crawl, its own day; a history import, its days
-- and the month after. Bounded by run day, never a scan of `offers`; the same result whatever order
-- the runs were loaded in.
CREATE OR REPLACE TEMP TABLE load_reference_days AS
SELECT DISTINCT v.run_day
FROM (SELECT DISTINCT run_day FROM gpu_price_votes) AS v
JOIN load_vote_days AS l ON v.run_day BETWEEN l.run_day AND l.run_day + (price_window_days() - 1);

DELETE FROM price_reference_votes WHERE run_day IN (SELECT run_day FROM load_reference_days);

INSERT INTO price_reference_votes
SELECT run_day, gpu_model, pricing_type, platform, vote_usd_per_gpu_hour, days
FROM price_window_votes('load_reference_days');

DROP TABLE load_reference_days;
DROP TABLE load_vote_days;
