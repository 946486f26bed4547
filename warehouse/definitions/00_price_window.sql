-- The history rule (rule 3 of docs/plausibility.md): a price far below what the other platforms ask
-- for the same card over the last weeks is a mistake, not a bargain. One rule for every offer,
-- crawled, quoted or imported, judged when the offer is read (judged_offers, 40_judged_offers.sql,
-- and the history's implausible_offers), never when it loads: so the verdict is the same whatever
-- order the data arrived in, and an offer judged implausible stays stored, listed with its reason
-- (plan_excluded_offers for a plan day, implausible_offers for any day), out of plans and of the
-- price references.
--
-- Why: the day's price floor (00_price_floor.sql) compares an offer with the other platforms that
-- day, so it cannot judge a lone quote: one "2.1万" read as 2.1 CNY, or a monthly price filed as
-- hourly, became 20 of a day's 24 cheapest plans. GPU rental prices fall by tens of percent a year,
-- not to a tenth in a month.
--
-- The reference of an offer (platform P, GPU model G, pricing type T, run day D): the median of the
-- other platforms' votes for G at T on D, each platform's vote being the median, over the
-- price_window_days() days up to D, of its cheapest offer of G at T each day (runs that worked; table
-- price_reference_votes, kept by load/price_references.sql). Spot is judged against spot, a monthly
-- plan against monthly plans: each pricing type is its own market. At least
-- price_reference_min_platforms() other platforms, so that no one odd platform decides it (the
-- observations' GCP quoted an 8-GPU H200 spot instance as 49.24 "per GPU-hour" against RunPod's
-- 2.29). With fewer, the compute stand-in: the median of the other platforms' votes of every card at
-- T per dense BF16 TFLOP (gpus table), times G's TFLOPs, since nobody rents compute for a tenth of
-- what the market asks for it. With neither, nothing is judged. An offer under history_price_share()
-- of its reference is implausible. A fractional offer (gpu_frac) is priced per share of a card: never
-- judged, never a vote.
CREATE OR REPLACE MACRO history_price_share() AS CAST(0.1 AS DOUBLE);
-- A month: long enough that a platform's bad day or two cannot move its vote (a median), short
-- enough to follow prices falling by tens of percent a year. Stored in price_reference_votes: a
-- change needs a migration that rebuilds that table.
CREATE OR REPLACE MACRO price_window_days() AS 30;
-- As the day's price floor: with one or two voters a single odd platform decides; with three, it cannot.
CREATE OR REPLACE MACRO price_reference_min_platforms() AS 3;

-- The references of `keys`: the name of a table or CTE with columns run_day, gpu_model,
-- pricing_type, platform (the offers to judge). One row per key with a reference:
-- reference_usd_per_gpu_hour, reference_source ('card' | 'compute'), reference_platforms.
CREATE OR REPLACE MACRO price_references(keys) AS TABLE
WITH wanted AS (
    SELECT DISTINCT run_day, gpu_model, pricing_type, platform FROM query_table(keys)
),
votes AS MATERIALIZED (
    SELECT v.*
    FROM price_reference_votes AS v
    SEMI JOIN (SELECT DISTINCT run_day, pricing_type FROM wanted) AS w USING (run_day, pricing_type)
),
by_card AS MATERIALIZED (
    SELECT
        w.run_day,
        w.gpu_model,
        w.pricing_type,
        w.platform,
        median(v.vote_usd_per_gpu_hour) AS reference_usd_per_gpu_hour,
        count(*) AS reference_platforms
    FROM wanted AS w
    JOIN votes AS v
      ON v.run_day = w.run_day AND v.gpu_model = w.gpu_model AND v.pricing_type = w.pricing_type
     AND v.platform <> w.platform
    GROUP BY ALL
    HAVING count(*) >= price_reference_min_platforms()
),
-- the compute stand-in only where the card's own reference is missing: it medians every card's
-- votes of the day, so asking it for every key costs most of a trend's time (and changes nothing)
uncovered AS (
    SELECT DISTINCT w.run_day, w.pricing_type, w.platform
    FROM wanted AS w
    ANTI JOIN by_card AS b
      ON b.run_day = w.run_day AND b.gpu_model = w.gpu_model AND b.pricing_type = w.pricing_type
     AND b.platform = w.platform
),
by_compute AS (
    SELECT
        w.run_day,
        w.pricing_type,
        w.platform,
        median(v.vote_usd_per_gpu_hour / g.bf16_dense_tflops) AS usd_per_tflop_hour,
        count(DISTINCT v.platform) AS reference_platforms
    FROM uncovered AS w
    JOIN votes AS v ON v.run_day = w.run_day AND v.pricing_type = w.pricing_type AND v.platform <> w.platform
    JOIN gpus AS g ON g.gpu_model = v.gpu_model AND g.bf16_dense_tflops > 0
    GROUP BY ALL
    HAVING count(DISTINCT v.platform) >= price_reference_min_platforms()
)
SELECT *, 'card' AS reference_source FROM by_card
UNION ALL BY NAME
SELECT
    w.run_day,
    w.gpu_model,
    w.pricing_type,
    w.platform,
    c.usd_per_tflop_hour * g.bf16_dense_tflops AS reference_usd_per_gpu_hour,
    c.reference_platforms,
    'compute' AS reference_source
FROM wanted AS w
JOIN gpus AS g ON g.gpu_model = w.gpu_model AND g.bf16_dense_tflops > 0
JOIN by_compute AS c ON c.run_day = w.run_day AND c.pricing_type = w.pricing_type AND c.platform = w.platform
ANTI JOIN by_card AS b
  ON b.run_day = w.run_day AND b.gpu_model = w.gpu_model AND b.pricing_type = w.pricing_type
 AND b.platform = w.platform;

-- Why a priced offer is implausibly cheap against its reference (price_references), or NULL when it
-- is not (or has no reference).
CREATE OR REPLACE MACRO history_price_problem(
    price_usd_per_gpu_hour, reference_usd_per_gpu_hour, reference_source, reference_platforms, pricing_type
) AS
    CASE
        WHEN price_usd_per_gpu_hour < reference_usd_per_gpu_hour * history_price_share()
            THEN printf(
                'implausible price: %g USD per GPU-hour is under %g%% of %s (%g USD per GPU-hour, '
                || 'the median of %d other platforms'' %s prices over %d days)',
                round(price_usd_per_gpu_hour, 4),
                history_price_share() * 100,
                CASE reference_source
                    WHEN 'card' THEN 'what the other platforms ask for this GPU'
                    ELSE 'what the other platforms ask for its compute (per TFLOP, scaled to this GPU)'
                END,
                round(reference_usd_per_gpu_hour, 4),
                reference_platforms,
                replace(pricing_type, '_', '-'),
                price_window_days())
    END;
