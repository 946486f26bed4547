-- "The day's offers": the offers of the run that stands for each platform on a day, judged against
-- the history (a price far under the other platforms' of the card over the last weeks: a mistake,
-- 00_price_window.sql) and the price floor (placeholders, 00_price_floor.sql), with spot and
-- plannability said in columns.
-- Plans, plan changes, the digest, price trends and `gpuplan history` all read through it; nothing
-- else re-types these filters. The offers of the runs are standing_offers(): a run carried beside a
-- partial crawl brings only what that crawl did not read. Arguments:
--   first_day, last_day  the days (day_runs) whose offers to read;
--   latest := TRUE       instead: each platform's latest usable crawl (latest_runs), as one group,
--                        `day` NULL (what ad-hoc plans price from);
--   gpu := NULL          only this canonical GPU model (a trend reads one; the floor is per GPU);
--   max_stale_hours := NULL  with latest: a platform's latest usable crawl stands while it is at most
--                        this many hours older than a later failed attempt (GPUPLAN_STALE_HOURS;
--                        NULL: always). A day's runs are bounded when recorded (day_runs).
-- Every offer of those runs on a canonical GPU with a positive price per GPU-hour and GPUs, with:
--   day                the day (NULL with latest);
--   crawled_at         when its run crawled: what its price stands "as of";
--   stale              its run was carried by the carry rule (15_crawl_carries.sql: the day's or
--                      latest crawl failed, was partial, or did not happen; day_runs.stale,
--                      latest_runs.stale): its stock is unknown, so available_gpus
--                      is NULL (no stock figure counts it, a plan says stock_known FALSE);
--   run_status         the run's status: 'ok' or 'partial' (a partial run's stock is incomplete);
--   spot               the offer is interruptible (pricing_type 'spot');
--   fractional         the offer rents a share of one card (gpu_frac): shown, never a card to plan,
--                      never a price reference (its price per GPU-hour is not a card's);
--   history_reference, history_reference_usd_per_gpu_hour, history_reference_platforms
--                      what the history rule judged it against (price_references: 'card' |
--                      'compute' | NULL, nothing to judge by);
--   implausible, implausible_reason
--                      under history_price_share() of that: a mistake, kept and listed, left out of
--                      plans and of the price floor's votes (history_price_problem says why);
--   price_reference    'other_platforms' | 'own_offers' | NULL (nothing to judge by: kept);
--   reference_usd_per_gpu_hour, reference_offers, floor_share   the median it is judged against;
--   below_price_floor  under floor_share of that median: a placeholder;
--   plannable          what a plan may use: not spot (a month of training cannot count on
--                      interruptible machines), not fractional, not implausible, not below the floor.
-- Spot prices are judged against spot prices, the others against the others: a spot bid sits at a
-- fraction of on-demand by design. Each platform votes once per GPU (its cheapest), so neither a
-- marketplace's dozens of listings nor a platform quoting instance totals sways the median.
CREATE OR REPLACE MACRO judged_offers(first_day, last_day, latest := FALSE, gpu := NULL, max_stale_hours := NULL) AS TABLE
WITH runs AS MATERIALIZED (
    SELECT day, platform, crawl_id, status, run_day, crawled_at, stale, read_by
    FROM day_runs
    WHERE NOT latest AND day BETWEEN first_day AND last_day
    UNION ALL
    SELECT CAST(NULL AS DATE) AS day, platform, crawl_id, status, run_day, crawled_at, stale, read_by
    FROM latest_runs
    WHERE latest AND (max_stale_hours IS NULL OR stale_hours <= max_stale_hours)
),
run_offers AS MATERIALIZED (
    SELECT
        day,
        * EXCLUDE (day, status, crawled_at, stale, read_by)
            REPLACE (CASE WHEN stale THEN NULL ELSE available_gpus END AS available_gpus),
        crawled_at,
        stale,
        status AS run_status,
        pricing_type = 'spot' AS spot,
        gpu_frac IS NOT NULL AS fractional
    FROM standing_offers('runs')
    WHERE gpu_model IS NOT NULL
      AND (gpu IS NULL OR gpu_model = gpu)
      AND price_usd_per_gpu_hour > 0
      AND gpu_count >= 1
),
history_keys AS (
    SELECT DISTINCT run_day, gpu_model, pricing_type, platform FROM run_offers WHERE NOT fractional
),
history_references AS MATERIALIZED (
    SELECT * FROM price_references('history_keys')
),
day_offers AS MATERIALIZED (
    SELECT
        o.*,
        h.reference_source AS history_reference,
        h.reference_usd_per_gpu_hour AS history_reference_usd_per_gpu_hour,
        h.reference_platforms AS history_reference_platforms,
        history_price_problem(
            o.price_usd_per_gpu_hour, h.reference_usd_per_gpu_hour, h.reference_source,
            h.reference_platforms, o.pricing_type
        ) AS implausible_reason,
        implausible_reason IS NOT NULL AS implausible,
        row_number() OVER () AS day_offer_no
    FROM run_offers AS o
    LEFT JOIN history_references AS h
      ON NOT o.fractional
     AND h.run_day = o.run_day AND h.gpu_model = o.gpu_model AND h.pricing_type = o.pricing_type
     AND h.platform = o.platform
),
platform_cheapest AS (
    SELECT day, spot, gpu_model, platform, min(price_usd_per_gpu_hour) AS cheapest_usd_per_gpu_hour
    FROM day_offers
    WHERE NOT fractional AND NOT implausible
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
-- only where the other platforms are too few to judge by: those offers are picked first, since the
-- pairs of a platform's offers of one card grow with the square of its listings
own_judged AS MATERIALIZED (
    SELECT d.*
    FROM day_offers AS d
    ANTI JOIN other_platforms AS x
      ON x.day IS NOT DISTINCT FROM d.day AND x.spot = d.spot AND x.gpu_model = d.gpu_model
     AND x.platform = d.platform
),
own_offers AS (
    SELECT a.day_offer_no, median(b.price_usd_per_gpu_hour) AS median_usd_per_gpu_hour, count(*) AS voters
    FROM own_judged AS a
    JOIN own_judged AS b
      ON b.day IS NOT DISTINCT FROM a.day AND b.spot = a.spot AND b.gpu_model = a.gpu_model
     AND b.platform = a.platform AND b.day_offer_no <> a.day_offer_no AND NOT b.fractional AND NOT b.implausible
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
    NOT spot AND NOT fractional AND NOT implausible AND NOT coalesce(price_usd_per_gpu_hour < floor_share * reference_usd_per_gpu_hour, FALSE)
        AS plannable
FROM judged;
