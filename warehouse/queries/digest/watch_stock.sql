-- What a stock watch compares with its minimum: per day of $days, the platform (of $platforms; NULL:
-- every platform) with the most GPUs of $gpu_model free, all its offers of the card together.
-- Offers are the day's (judged_offers) that say their stock, not spot (a marketplace lists a machine
-- on demand and as spot: counting both would count its GPUs twice) and not under the price floor
-- (a placeholder is no sign of stock).
WITH free AS (
    SELECT day, platform, sum(available_gpus) AS available_gpus
    FROM judged_offers(
        list_min(CAST($days AS DATE[])), list_max(CAST($days AS DATE[])), gpu := CAST($gpu_model AS VARCHAR)
    )
    WHERE NOT spot
      AND NOT below_price_floor
      AND available_gpus IS NOT NULL
      AND list_contains(CAST($days AS DATE[]), day)
      AND ($platforms IS NULL OR list_contains(CAST($platforms AS VARCHAR[]), platform))
    GROUP BY day, platform
)
SELECT
    day,
    CAST(max(available_gpus) AS INTEGER) AS available_gpus,
    arg_max(platform, (available_gpus, platform)) AS platform
FROM free
GROUP BY day
ORDER BY day
