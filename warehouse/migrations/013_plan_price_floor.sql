-- Placeholder prices: a platform quoting far below the rest of the market for a GPU on a day shows a
-- placeholder or a unit slip, not a deal (RunPod answers `uninterruptablePrice: 0.5` for out-of-stock
-- MI300X, H200 NVL and RTX 2000 Ada). Such offers stay in `offers` (history), but no plan uses them;
-- `plan_excluded_offers` records which ones each day's plans left out, against what.

-- The day's offers a plan may use: from the crawls recorded for the day that worked, on a canonical
-- GPU, priced, not spot. Each carries the market it is judged against, and `below_price_floor`:
--   * where at least min_other_platforms other platforms price the GPU that day: the median, over
--     them, of each one's cheapest price per GPU-hour (one vote per platform, so neither a
--     marketplace's dozens of listings nor a platform quoting instance totals sways it); below
--     floor_share of it is a placeholder;
--   * else, where the same platform has other offers of the GPU that day (other tiers, regions, unit
--     sizes): their median; below own_floor_share of it is a placeholder;
--   * else nothing to judge by: kept.
-- Callers bind the numbers (warehouse/plans.py: PRICE_FLOOR_SHARE, OWN_PRICE_FLOOR_SHARE,
-- MIN_OTHER_PLATFORMS, with their reasons).
CREATE MACRO plan_offers(for_date, floor_share, own_floor_share, min_other_platforms) AS TABLE
WITH day_offers AS MATERIALIZED (
    SELECT o.*, row_number() OVER () AS day_offer_no
    FROM offers AS o
    JOIN plan_crawls AS c ON c.crawl_id = o.crawl_id AND c.platform = o.platform
    WHERE c.plan_date = for_date
      AND c.status IN ('ok', 'partial')  -- a failed crawl's stray items are history, not offers
      AND o.gpu_model IS NOT NULL
      AND o.price_usd_per_gpu_hour > 0
      AND o.pricing_type <> 'spot'       -- a month of training cannot count on interruptible machines
      AND o.gpu_count >= 1
),
platform_cheapest AS (
    SELECT gpu_model, platform, min(price_usd_per_gpu_hour) AS cheapest_usd_per_gpu_hour
    FROM day_offers
    GROUP BY gpu_model, platform
),
other_platform_votes AS (
    SELECT
        p.gpu_model,
        p.platform,
        median(q.cheapest_usd_per_gpu_hour) AS median_usd_per_gpu_hour,
        count(*) AS voters
    FROM platform_cheapest AS p
    JOIN platform_cheapest AS q ON q.gpu_model = p.gpu_model AND q.platform <> p.platform
    GROUP BY p.gpu_model, p.platform
),
other_platforms AS (
    SELECT * FROM other_platform_votes WHERE voters >= min_other_platforms
),
-- only where the other platforms are too few to judge by
own_offers AS (
    SELECT a.day_offer_no, median(b.price_usd_per_gpu_hour) AS median_usd_per_gpu_hour, count(*) AS voters
    FROM day_offers AS a
    JOIN day_offers AS b
      ON b.gpu_model = a.gpu_model AND b.platform = a.platform AND b.day_offer_no <> a.day_offer_no
    ANTI JOIN other_platforms AS x ON x.gpu_model = a.gpu_model AND x.platform = a.platform
    GROUP BY a.day_offer_no
),
judged AS (
    SELECT
        d.*,
        CASE WHEN x.voters IS NOT NULL THEN 'other_platforms' WHEN w.voters IS NOT NULL THEN 'own_offers' END
            AS price_reference,
        coalesce(x.median_usd_per_gpu_hour, w.median_usd_per_gpu_hour) AS reference_usd_per_gpu_hour,
        coalesce(x.voters, w.voters, 0) AS reference_offers,
        CASE WHEN x.voters IS NOT NULL THEN floor_share ELSE own_floor_share END AS reference_share
    FROM day_offers AS d
    LEFT JOIN other_platforms AS x ON x.gpu_model = d.gpu_model AND x.platform = d.platform
    LEFT JOIN own_offers AS w ON w.day_offer_no = d.day_offer_no
)
SELECT
    * EXCLUDE (day_offer_no, reference_share),
    coalesce(price_usd_per_gpu_hour < reference_share * reference_usd_per_gpu_hour, FALSE)
        AS below_price_floor
FROM judged;

CREATE TABLE plan_excluded_offers (
    plan_date                   DATE NOT NULL,
    platform                    VARCHAR NOT NULL,
    crawl_id                    VARCHAR NOT NULL,
    offer_id                    VARCHAR NOT NULL,
    region                      VARCHAR,
    gpu_model                   VARCHAR NOT NULL,
    gpu_count                   INTEGER NOT NULL,
    pricing_type                VARCHAR NOT NULL,
    price_usd_per_gpu_hour      DOUBLE NOT NULL,
    price_reference             VARCHAR NOT NULL,  -- 'other_platforms' | 'own_offers' (see plan_offers)
    reference_usd_per_gpu_hour  DOUBLE NOT NULL,   -- the median the price fell far below
    reference_offers            INTEGER NOT NULL,  -- platforms (or the platform's other offers) in it
    floor_share                 DOUBLE NOT NULL,   -- the share of the median it was under
    computed_at                 TIMESTAMP NOT NULL
);
