-- What each stock watch compares with its minimum, all watches in one pass over the offers: per
-- watch ($watch_nos, each with its GPU model in $gpu_models and its platforms in $platforms, [] for
-- every platform) and day of $days, the platform with the most GPUs of its card free, all its offers
-- of the card together. Offers are the day's (judged_offers) that say their stock and are not under
-- the price floor (a placeholder is no sign of stock), counted once per unit of stock (free_gpus: a
-- machine listed whole and in slices, or on demand and at a spot bid, counts its free GPUs once; pod
-- sizes of one stock count are one pool, counted by the largest; a fractional offer is no card).
-- The free GPUs per day, card and platform are counted once, then each watch takes the most of its
-- platforms'.
-- With $latest: instead each platform's latest usable crawl, `day` NULL (the intraday watches).
WITH watches AS (
    SELECT * FROM watch_scopes($watch_nos, $gpu_models, $platforms)
),
judged AS (
    SELECT
        day AS scope, platform, gpu_model, offer_id, machine_id, pool_id, gpu_ids, gpu_frac, available_gpus
    FROM judged_offers(
        list_min(CAST($days AS DATE[])), list_max(CAST($days AS DATE[])), latest := CAST($latest AS BOOLEAN)
    )
    WHERE NOT below_price_floor
      AND available_gpus IS NOT NULL
      AND (CAST($latest AS BOOLEAN) OR list_contains(CAST($days AS DATE[]), day))
      AND gpu_model IN (SELECT gpu_model FROM watches)
),
free AS (
    SELECT scope AS day, gpu_model, platform, sum(free_gpus) AS available_gpus
    FROM free_gpus('judged')
    GROUP BY ALL
)
SELECT
    w.watch_no,
    f.day,
    CAST(max(f.available_gpus) AS INTEGER) AS available_gpus,
    arg_max(f.platform, (f.available_gpus, f.platform)) AS platform
FROM watches AS w
JOIN free AS f
  ON f.gpu_model = w.gpu_model AND (len(w.platforms) = 0 OR list_contains(w.platforms, f.platform))
GROUP BY w.watch_no, f.day
ORDER BY w.watch_no, f.day
