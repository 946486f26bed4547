-- Keep price_reference_votes (the history rule's votes, definitions/00_price_window.sql) equal to
-- what the offers say, after a load added votes (temp table load_vote_days, load/insert_offers.sql:
-- the run days and platforms of its votes) and recorded its runs (a vote counts once its run
-- worked). A day's votes read the price_window_days() days up to it, so the days to recompute are
-- the days with votes from each loaded run day to the end of its window: a daily or intraday crawl,
-- its own day; a history import, its days and the month after. On such a day only the loaded
-- platforms' votes can change (a platform's vote reads its own crawls alone), so only theirs are
-- computed and replaced; on a day that had no reference votes yet, every platform with prices in
-- its window gets its first one. Bounded by run day and platform, never a scan of `offers`, never a
-- rewrite of a whole day (a cycle of five crawls replaced ~2,000 votes a crawl on a warehouse of 28
-- platforms); the same result whatever order the runs were loaded in.
-- (the outer bounds let the scans skip the row groups of other days: they cost the days', not the
-- history's)
CREATE OR REPLACE TEMP TABLE load_reference_days AS
SELECT DISTINCT v.run_day
FROM (
    SELECT DISTINCT run_day FROM gpu_price_votes
    WHERE run_day BETWEEN (SELECT min(run_day) FROM load_vote_days)
                      AND (SELECT max(run_day) FROM load_vote_days) + (price_window_days() - 1)
) AS v
JOIN load_vote_days AS l ON v.run_day BETWEEN l.run_day AND l.run_day + (price_window_days() - 1);

CREATE OR REPLACE TEMP TABLE load_new_reference_days AS
SELECT run_day FROM load_reference_days
ANTI JOIN (
    SELECT DISTINCT run_day FROM price_reference_votes
    WHERE run_day BETWEEN (SELECT min(run_day) FROM load_reference_days)
                      AND (SELECT max(run_day) FROM load_reference_days)
) USING (run_day);

CREATE OR REPLACE TEMP TABLE load_reference_keys AS
SELECT d.run_day, l.platform
FROM load_reference_days AS d
JOIN load_vote_days AS l ON d.run_day BETWEEN l.run_day AND l.run_day + (price_window_days() - 1)
UNION
SELECT run_day, platform FROM price_window_keys('load_new_reference_days');

DELETE FROM price_reference_votes AS p
USING load_reference_keys AS k
WHERE p.run_day = k.run_day AND p.platform = k.platform;

INSERT INTO price_reference_votes
SELECT run_day, gpu_model, pricing_type, platform, vote_usd_per_gpu_hour, days
FROM price_window_votes('load_reference_keys');

DROP TABLE load_reference_keys;
DROP TABLE load_new_reference_days;
DROP TABLE load_reference_days;
DROP TABLE load_vote_days;
