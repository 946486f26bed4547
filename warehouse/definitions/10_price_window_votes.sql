-- The platforms' votes of the history rule (00_price_window.sql) for `keys` (the name of a table or
-- CTE with columns run_day and platform): per (run_day, GPU model, pricing type, platform), the
-- median over the price_window_days() days up to run_day of the platform's cheapest offer of the
-- card at that type each day, from the runs that worked (gpu_price_votes, one row per crawl). A
-- platform's vote reads its own crawls alone, so a key costs its platform's window, not the day's
-- every platform. load/price_references.sql stores them in price_reference_votes for the keys a
-- load touches.
CREATE OR REPLACE MACRO price_window_votes(keys) AS TABLE
WITH wanted AS (
    SELECT DISTINCT run_day, platform FROM query_table(keys)
),
daily AS (
    SELECT v.platform, v.run_day, v.gpu_model, v.pricing_type, min(v.cheapest_usd_per_gpu_hour) AS cheapest
    FROM gpu_price_votes AS v
    JOIN crawl_runs AS r USING (crawl_id)
    WHERE run_worked(r.status)
      AND v.platform IN (SELECT platform FROM wanted)
      AND v.run_day BETWEEN (SELECT min(run_day) FROM wanted) - (price_window_days() - 1)
                        AND (SELECT max(run_day) FROM wanted)
    GROUP BY ALL
),
-- The medians are window functions over each (platform, card, type)'s days in run_day order: a join
-- of each key with its window's days, then grouped, makes 30 rows per vote (4M for a year of daily
-- history, 1M rows). Each wanted day of each series its platform has gets a probe row (no price) at
-- which its window is read; a daily row of a wanted day is its own probe.
series AS (
    SELECT DISTINCT platform, gpu_model, pricing_type FROM daily
),
probes AS (
    SELECT w.platform, w.run_day, s.gpu_model, s.pricing_type
    FROM wanted AS w
    JOIN series AS s USING (platform)
),
windowed AS (
    SELECT
        platform,
        run_day,
        gpu_model,
        pricing_type,
        p.run_day IS NOT NULL AS wanted,
        -- median and count skip the probes' NULL; the frame (RANGE: by day, peers included) is the
        -- price_window_days() days up to run_day
        median(d.cheapest) OVER window_days AS vote_usd_per_gpu_hour,
        count(d.cheapest) OVER window_days AS days
    FROM daily AS d
    FULL JOIN probes AS p USING (platform, run_day, gpu_model, pricing_type)
    WINDOW window_days AS (
        PARTITION BY platform, gpu_model, pricing_type
        ORDER BY run_day
        RANGE BETWEEN price_window_days() - 1 PRECEDING AND CURRENT ROW
    )
)
SELECT run_day, gpu_model, pricing_type, platform, vote_usd_per_gpu_hour, CAST(days AS INTEGER) AS days
FROM windowed
WHERE wanted AND days > 0;

-- Every key the votes of `days` (the name of a table or CTE with a column run_day) can have: each
-- day with each platform that has votes in the price_window_days() days up to it.
CREATE OR REPLACE MACRO price_window_keys(days) AS TABLE
SELECT DISTINCT d.run_day, v.platform
FROM (SELECT DISTINCT run_day FROM query_table(days)) AS d
-- each (day, platform) with votes once, before the join: a year of days joined with every vote of
-- their windows is 30 rows a vote
JOIN (
    SELECT DISTINCT run_day, platform
    FROM gpu_price_votes
    WHERE run_day BETWEEN (SELECT min(run_day) FROM query_table(days)) - (price_window_days() - 1)
                      AND (SELECT max(run_day) FROM query_table(days))
) AS v ON v.run_day BETWEEN d.run_day - (price_window_days() - 1) AND d.run_day;
