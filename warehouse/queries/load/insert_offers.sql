-- Append the priced, valid records of one crawl or one history import (temp view load_priced) to
-- offers. hourly_rentable: only an offer billed by the hour can be rented for an hour; day, week
-- and month offers keep their per-GPU-hour price for comparison but are never hourly. crawl_id,
-- source and run_day (run_day_of the run, as daily_runs.day) come staged with each record.
--
-- First, the same rows' votes for the history rule (gpu_price_votes, migration 093: per crawl, GPU
-- model and pricing type, its cheapest whole-card price per GPU-hour), and the run days and
-- platforms they vote for (temp table load_vote_days, whose references load/price_references.sql
-- recomputes once the runs are recorded).
CREATE OR REPLACE TEMP TABLE load_votes AS
SELECT
    crawl_id, platform, run_day, gpu_model, pricing_type,
    min(price_usd_per_gpu_hour) AS cheapest_usd_per_gpu_hour, count(*) AS offers
FROM load_priced
WHERE reason IS NULL
  AND gpu_model IS NOT NULL
  AND gpu_frac IS NULL
  AND price_usd_per_gpu_hour IS NOT NULL
GROUP BY crawl_id, platform, run_day, gpu_model, pricing_type;

INSERT INTO gpu_price_votes
SELECT crawl_id, platform, run_day, gpu_model, pricing_type, cheapest_usd_per_gpu_hour, offers
FROM load_votes;

-- from the rows just voted, not from gpu_price_votes: a scan of its crawl ids grew with history
CREATE OR REPLACE TEMP TABLE load_vote_days AS
SELECT DISTINCT run_day, platform FROM load_votes;

DROP TABLE load_votes;

-- By name: every column load_priced has is an offers column, but the record's verdict and its text.
INSERT INTO offers BY NAME
SELECT * EXCLUDE (reason, unparsed, raw), billing_period = 'hour' AS hourly_rentable
FROM load_priced
WHERE reason IS NULL
