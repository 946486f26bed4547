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
)
SELECT
    w.run_day,
    d.gpu_model,
    d.pricing_type,
    d.platform,
    median(d.cheapest) AS vote_usd_per_gpu_hour,
    CAST(count(*) AS INTEGER) AS days
FROM wanted AS w
JOIN daily AS d
  ON d.platform = w.platform AND d.run_day BETWEEN w.run_day - (price_window_days() - 1) AND w.run_day
GROUP BY ALL;

-- Every key the votes of `days` (the name of a table or CTE with a column run_day) can have: each
-- day with each platform that has votes in the price_window_days() days up to it.
CREATE OR REPLACE MACRO price_window_keys(days) AS TABLE
SELECT DISTINCT d.run_day, v.platform
FROM (SELECT DISTINCT run_day FROM query_table(days)) AS d
JOIN gpu_price_votes AS v ON v.run_day BETWEEN d.run_day - (price_window_days() - 1) AND d.run_day;
