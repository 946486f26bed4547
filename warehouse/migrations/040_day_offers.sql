-- One home for two rules every reader of prices shares (issue 13):
--   1. which run stands for a platform: live crawls over offline demo replays;
--   2. "the day's offers": the offers of the run that stands for each platform on a day, judged
--      against the price floor (placeholders), with spot and plannability said in columns.
-- Plans, plan changes, the digest, price trends and `gpuplan history` all read through
-- `judged_offers`; nothing else re-types these filters.

-- Runs whose offers can stand for their platform: they worked and loaded offers (a failed or empty
-- run never hides earlier offers, nor shows a platform as sold out). An offline run (the bundled
-- demo snapshots, `gpuplan refresh --offline`) counts only for a platform that has never been
-- crawled live with offers: demo data never poses as live data, whatever the order of the runs.
CREATE VIEW usable_runs AS
WITH live_platforms AS (
    SELECT DISTINCT platform
    FROM crawl_runs
    WHERE status IN ('ok', 'partial') AND offers_loaded > 0 AND NOT offline
)
SELECT
    r.*,
    CAST(coalesce(r.started_at, r.loaded_at) AS DATE) AS run_day,
    coalesce(r.finished_at, r.started_at, r.loaded_at) AS crawled_at
FROM crawl_runs AS r
WHERE r.status IN ('ok', 'partial')
  AND r.offers_loaded > 0
  AND (NOT r.offline OR r.platform NOT IN (SELECT platform FROM live_platforms));

-- Per platform, its latest usable crawl of our own (history imports are history, not what is on
-- offer now). "Latest" is the crawl's own time, so loading an old crawl file later does not
-- replace a newer one.
CREATE VIEW latest_runs AS
SELECT platform, crawl_id, status, run_day, crawled_at, offline
FROM usable_runs
WHERE source = 'crawl'
QUALIFY row_number() OVER (PARTITION BY platform ORDER BY crawled_at DESC, loaded_at DESC, crawl_id) = 1;

CREATE OR REPLACE VIEW latest_offers AS
SELECT o.*, r.crawled_at
FROM offers AS o
JOIN latest_runs AS r ON r.crawl_id = o.crawl_id AND r.platform = o.platform AND o.run_day = r.run_day;

-- The run that stands for a platform on a day (UTC run day): our own crawl before an import, live
-- before offline (usable_runs), then the latest.
CREATE OR REPLACE VIEW daily_runs AS
SELECT run_day AS day, platform, crawl_id, source, status
FROM usable_runs
QUALIFY row_number() OVER (
    PARTITION BY run_day, platform
    ORDER BY (source = 'crawl') DESC, started_at DESC NULLS LAST, loaded_at DESC, crawl_id
) = 1;

-- The runs of each day: the crawls the pipeline recorded for the plan day (plan_crawls, those that
-- worked) where the day has any, else the run that stands for each platform that day (daily_runs):
-- history the pipeline never planned. A crawl recorded for a plan day stands for that day only
-- (the 06:00 Shanghai run starts at 22:00 UTC the day before: its run day is not its plan day).
-- `run_day` is the run's own day, for pruning the offers scan.
CREATE VIEW day_runs AS
SELECT
    p.plan_date AS day,
    p.platform,
    p.crawl_id,
    r.status,
    CAST(coalesce(r.started_at, r.loaded_at) AS DATE) AS run_day
FROM plan_crawls AS p
JOIN crawl_runs AS r USING (crawl_id)
WHERE r.status IN ('ok', 'partial')
UNION ALL
SELECT d.day, d.platform, d.crawl_id, d.status, d.day AS run_day
FROM daily_runs AS d
WHERE d.day NOT IN (SELECT plan_date FROM plan_crawls)
  AND d.crawl_id NOT IN (SELECT crawl_id FROM plan_crawls);

-- The price floor. An offer priced far below the rest of the market for its GPU that day is a
-- placeholder or a unit slip, not a deal: it stays in `offers` (history) but no plan, price move
-- or chart uses it. Calibrated on the real history (price_history/ observations: 159 days, 43
-- platforms, RunPod's out-of-stock placeholder of 0.5 USD per GPU-hour for MI300X and H200):
-- against the median of the other platforms' cheapest price for the GPU, RunPod's placeholder sits
-- at 0.14-0.18 of it, the cheapest real marketplace offers at 0.21 and up (vast A100 80GB
-- 0.43-0.47 against 2.06): one GPU's real prices differ 2-3x, never 5x.
CREATE MACRO price_floor_share() AS CAST(0.2 AS DOUBLE);
-- Where too few other platforms sell the GPU: against the median of the platform's own other offers
-- of it. A platform's tiers and regions of one GPU differ by up to 2x (RunPod community vs secure),
-- and RunPod's 0.5 MI300X stood beside its own 1.99 (0.25) on the 19 days it was the only seller.
CREATE MACRO own_price_floor_share() AS CAST(1 / 3 AS DOUBLE);
-- Other platforms that must price the GPU that day for the first rule: with one or two, a single
-- odd platform would decide the median; with three, it cannot.
CREATE MACRO price_floor_min_other_platforms() AS 3;

-- The day's offers, judged. Arguments:
--   first_day, last_day  the days (day_runs) whose offers to read;
--   latest := TRUE       instead: each platform's latest usable crawl (latest_runs), as one group,
--                        `day` NULL (what ad-hoc plans price from);
--   gpu := NULL          only this canonical GPU model (a trend reads one; the floor is per GPU).
-- Every offer of those runs on a canonical GPU with a positive price per GPU-hour and GPUs, with:
--   day                the day (NULL with latest);
--   run_status         the run's status: 'ok' or 'partial' (a partial run's stock is incomplete);
--   spot               the offer is interruptible (pricing_type 'spot');
--   price_reference    'other_platforms' | 'own_offers' | NULL (nothing to judge by: kept);
--   reference_usd_per_gpu_hour, reference_offers, floor_share   the median it is judged against;
--   below_price_floor  under floor_share of that median: a placeholder;
--   plannable          what a plan may use: not spot (a month of training cannot count on
--                      interruptible machines) and not below the floor.
-- Spot prices are judged against spot prices, the others against the others: a spot bid sits at a
-- fraction of on-demand by design. Each platform votes once per GPU (its cheapest), so neither a
-- marketplace's dozens of listings nor a platform quoting instance totals sways the median.
CREATE MACRO judged_offers(first_day, last_day, latest := FALSE, gpu := NULL) AS TABLE
WITH runs AS MATERIALIZED (
    SELECT day, platform, crawl_id, status, run_day
    FROM day_runs
    WHERE NOT latest AND day BETWEEN first_day AND last_day
    UNION ALL
    SELECT CAST(NULL AS DATE) AS day, platform, crawl_id, status, run_day
    FROM latest_runs
    WHERE latest
),
day_offers AS MATERIALIZED (
    SELECT
        r.day,
        o.*,
        r.status AS run_status,
        o.pricing_type = 'spot' AS spot,
        row_number() OVER () AS day_offer_no
    FROM offers AS o
    JOIN runs AS r ON r.crawl_id = o.crawl_id AND r.platform = o.platform AND o.run_day = r.run_day
    WHERE o.gpu_model IS NOT NULL
      AND (gpu IS NULL OR o.gpu_model = gpu)
      AND o.price_usd_per_gpu_hour > 0
      AND o.gpu_count >= 1
),
platform_cheapest AS (
    SELECT day, spot, gpu_model, platform, min(price_usd_per_gpu_hour) AS cheapest_usd_per_gpu_hour
    FROM day_offers
    GROUP BY day, spot, gpu_model, platform
),
other_platform_votes AS (
    SELECT
        p.day,
        p.spot,
        p.gpu_model,
        p.platform,
        median(q.cheapest_usd_per_gpu_hour) AS median_usd_per_gpu_hour,
        count(*) AS voters
    FROM platform_cheapest AS p
    JOIN platform_cheapest AS q
      ON q.day IS NOT DISTINCT FROM p.day AND q.spot = p.spot AND q.gpu_model = p.gpu_model
     AND q.platform <> p.platform
    GROUP BY p.day, p.spot, p.gpu_model, p.platform
),
other_platforms AS (
    SELECT * FROM other_platform_votes WHERE voters >= price_floor_min_other_platforms()
),
-- only where the other platforms are too few to judge by
own_offers AS (
    SELECT a.day_offer_no, median(b.price_usd_per_gpu_hour) AS median_usd_per_gpu_hour, count(*) AS voters
    FROM day_offers AS a
    JOIN day_offers AS b
      ON b.day IS NOT DISTINCT FROM a.day AND b.spot = a.spot AND b.gpu_model = a.gpu_model
     AND b.platform = a.platform AND b.day_offer_no <> a.day_offer_no
    ANTI JOIN other_platforms AS x
      ON x.day IS NOT DISTINCT FROM a.day AND x.spot = a.spot AND x.gpu_model = a.gpu_model
     AND x.platform = a.platform
    GROUP BY a.day_offer_no
),
judged AS (
    SELECT
        d.*,
        CASE WHEN x.voters IS NOT NULL THEN 'other_platforms' WHEN w.voters IS NOT NULL THEN 'own_offers' END
            AS price_reference,
        coalesce(x.median_usd_per_gpu_hour, w.median_usd_per_gpu_hour) AS reference_usd_per_gpu_hour,
        coalesce(x.voters, w.voters, 0) AS reference_offers,
        CASE WHEN x.voters IS NOT NULL THEN price_floor_share() ELSE own_price_floor_share() END AS floor_share
    FROM day_offers AS d
    LEFT JOIN other_platforms AS x
      ON x.day IS NOT DISTINCT FROM d.day AND x.spot = d.spot AND x.gpu_model = d.gpu_model
     AND x.platform = d.platform
    LEFT JOIN own_offers AS w ON w.day_offer_no = d.day_offer_no
)
SELECT
    * EXCLUDE (day_offer_no),
    coalesce(price_usd_per_gpu_hour < floor_share * reference_usd_per_gpu_hour, FALSE) AS below_price_floor,
    NOT spot AND NOT coalesce(price_usd_per_gpu_hour < floor_share * reference_usd_per_gpu_hour, FALSE)
        AS plannable
FROM judged;

DROP MACRO TABLE plan_offers;
