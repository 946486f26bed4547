-- What a stock watch compares with its minimum: per day of $days, the platform (of $platforms; NULL:
-- every platform) with the most GPUs of $gpu_model free, all its offers of the card together.
-- Offers are the day's (judged_offers) that say their stock and are not under the price floor (a
-- placeholder is no sign of stock), counted once per machine (free_gpus: a machine listed whole and
-- in slices, or on demand and at a spot bid, counts its free GPUs once; pod sizes of one stock count
-- are one pool, counted by the largest; a fractional offer is no card).
WITH judged AS (
    SELECT
        day AS scope, platform, gpu_model, offer_id, machine_id, pool_id, gpu_ids, gpu_frac, available_gpus
    FROM judged_offers(
        list_min(CAST($days AS DATE[])), list_max(CAST($days AS DATE[])), gpu := CAST($gpu_model AS VARCHAR)
    )
    WHERE NOT below_price_floor
      AND available_gpus IS NOT NULL
      AND list_contains(CAST($days AS DATE[]), day)
      AND ($platforms IS NULL OR list_contains(CAST($platforms AS VARCHAR[]), platform))
),
free AS (
    SELECT scope AS day, platform, sum(free_gpus) AS available_gpus
    FROM free_gpus('judged')
    GROUP BY ALL
)
SELECT
    day,
    CAST(max(available_gpus) AS INTEGER) AS available_gpus,
    arg_max(platform, (available_gpus, platform)) AS platform
FROM free
GROUP BY day
ORDER BY day
