-- SYNTHETIC daily offers for the scale benchmarks (bench_history.py, bench_growth.py): made up,
-- deterministic for a $seed, shaped like a crawl's OfferItem fields (text where a feed has text).
--
-- $days days from $first_day + $day_offset; each day every platform of the registered frame
-- bench_platforms(platform_no, platform, price_currency) quotes $offers_per_platform offers, one run
-- per (platform, day) with crawl_id = md5 of the seed, platform and day. bench_history.py registers
-- the platforms of the spider registry (`scrapy list`), each with the currency its recorded
-- fixture quotes in. An offer slot (platform, k) keeps its GPU, unit size, billing and base price
-- every day, as a listing does; its price moves by a 91-day seasonal swing of +-8 % and +-5 % of
-- daily noise. row_no numbers the rows in (day, platform, k) order, so loading in row_no order
-- keeps the offers table in time order, as daily loads do.
--
-- Registered frame bench_gpu_slots(slot, gpu_model, gpu_form, memory_gb): the GPU catalog with each
-- model repeated by its market weight, so `hash % slots` picks models with the market's skew.
--
-- Shape choices (each a rough reading of the real feeds in scrapers/fixtures, not a measurement):
-- a platform quotes in its fixture's currency (CNY, EUR or USD); 1 offer in 3 is priced per instance
-- (vastai style), 1 in 20 is a monthly plan, 1 in 8 of the hourly ones is spot at 60 %; 1 in 4 does not say
-- its stock; `extra` carries a few host fields, as vastai's does.
WITH slots AS (
    SELECT count(*) AS slot_count FROM bench_gpu_slots
),
platform_count AS (
    SELECT count(*) AS platforms FROM bench_platforms
),
runs AS (
    SELECT
        d.day_no,
        p.platform_no,
        CAST($first_day AS DATE) + CAST(d.day_no AS INTEGER) AS day,
        p.platform,
        p.price_currency,
        c.platforms,
        md5(concat_ws('|', 'bench', $seed, p.platform, d.day_no)) AS crawl_id
    FROM range($day_offset, $day_offset + $days) AS d(day_no), bench_platforms AS p, platform_count AS c
),
quotes AS (
    SELECT
        runs.*,
        k.offer_no,
        hash($seed, runs.platform_no, k.offer_no) AS offer_hash,
        hash($seed, runs.platform_no, k.offer_no, runs.day_no) AS day_hash,
        -- BIGINT, so the catalog join below is a hash join (UBIGINT % BIGINT compares as HUGEINT)
        CAST(hash($seed, runs.platform_no, k.offer_no) % slots.slot_count AS BIGINT) AS slot
    FROM runs, range($offers_per_platform) AS k(offer_no), slots
),
shaped AS (
    SELECT
        q.*,
        g.gpu_model,
        g.gpu_form,
        g.memory_gb,
        [1, 1, 1, 2, 4, 8][CAST((q.offer_hash >> 8) % 6 AS INTEGER) + 1] AS gpu_count,
        CASE WHEN (q.offer_hash >> 16) % 3 = 0 THEN 'instance' ELSE 'gpu' END AS price_per,
        (q.offer_hash >> 20) % 20 = 0 AS monthly,
        (q.offer_hash >> 20) % 20 <> 0 AND (q.offer_hash >> 26) % 8 = 0 AS spot,
        g.memory_gb / 40 * (0.5 + ((q.offer_hash >> 30) % 1000) / 1000)
            * (1 + 0.08 * sin(2 * pi() * q.day_no / 91))
            * (0.95 + (q.day_hash % 1000) / 10000) AS usd_per_gpu_hour
    FROM quotes AS q
    JOIN bench_gpu_slots AS g ON g.slot = q.slot
)
SELECT
    crawl_id,
    day,
    (day_no * platforms + platform_no) * $offers_per_platform + offer_no AS row_no,
    platform,
    platform || '-' || offer_no AS offer_id,
    'region-' || (offer_hash >> 40) % 5 AS region,
    'NVIDIA ' || gpu_model AS gpu_name_raw,
    gpu_model,
    gpu_form,
    memory_gb AS gpu_memory_gb,
    gpu_count,
    round(
        usd_per_gpu_hour
            * (CASE WHEN spot THEN 0.6 ELSE 1 END)
            -- rough rates of late 2026 (any will do: the load converts with the ECB rate of the day)
            * (CASE price_currency WHEN 'CNY' THEN 7.1 WHEN 'EUR' THEN 0.86 ELSE 1 END)
            * (CASE WHEN price_per = 'instance' THEN gpu_count ELSE 1 END)
            * (CASE WHEN monthly THEN 730 ELSE 1 END),
        4
    ) AS price_amount,
    price_currency,
    price_per,
    CASE WHEN monthly THEN 'month' ELSE 'hour' END AS billing_period,
    1 AS min_term_periods,
    CASE WHEN monthly THEN 'monthly_plan' WHEN spot THEN 'spot' ELSE 'on_demand' END AS pricing_type,
    CASE WHEN (offer_hash >> 44) % 4 = 0 THEN NULL ELSE gpu_count * CAST((day_hash >> 12) % 3 AS INTEGER) END
        AS available_gpus,
    'https://' || platform || '.invalid/offers' AS source_url,
    strftime(day + INTERVAL 6 HOUR + to_minutes(CAST(platform_no * 7 AS BIGINT)), '%Y-%m-%dT%H:%M:%SZ')
        AS observed_at,
    json_object(
        'machine_id', offer_hash % 100000,
        'host_id', (offer_hash >> 17) % 2000,
        'reliability', round(0.9 + (offer_hash % 100) / 1000, 3),
        'disk_space_gb', 100 * (1 + (offer_hash >> 5) % 20),
        'inet_down_mbps', round((day_hash % 10000) / 10, 1)
    ) AS extra
FROM shaped
