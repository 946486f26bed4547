-- GPU models that sold out or came back per platform between $previous_day and $day.
-- Each day's stock is from the run that stands for the platform that day (judged_offers), and only
-- platforms whose run was 'ok' on both days count: a partial crawl says nothing about stock. Offers
-- under the price floor are left out (a placeholder is no sign of stock). A model the platform
-- stopped listing counts as 0 GPUs (platforms list what they rent out); a model with any offer
-- lacking a stock figure is unknown, not zero, and left out. GPUs count once per unit of stock
-- (free_gpus: a machine listed whole and in slices, or on demand and at a spot bid, is one machine;
-- pod sizes of one stock count are one pool).
WITH judged AS (
    SELECT day, day AS scope, platform, gpu_model, offer_id, machine_id, pool_id, gpu_ids, gpu_frac,
           available_gpus, run_status
    FROM judged_offers(CAST($previous_day AS DATE), CAST($day AS DATE))
    WHERE NOT below_price_floor AND day IN ($previous_day, $day)
),
both_days_ok AS (
    SELECT platform
    FROM judged
    GROUP BY platform
    HAVING count(DISTINCT day) = 2 AND bool_and(run_status = 'ok')
),
counted AS (
    SELECT * FROM judged SEMI JOIN both_days_ok USING (platform)
),
stock AS (
    SELECT
        scope AS day,
        platform,
        gpu_model,
        CASE WHEN count(*) = count(free_gpus) THEN sum(free_gpus) END AS available_gpus
    FROM free_gpus('counted')
    GROUP BY ALL
),
paired AS (
    SELECT
        platform,
        gpu_model,
        prev.available_gpus AS old_available_gpus,
        cur.available_gpus AS new_available_gpus,
        prev.day IS NOT NULL AS listed_before,
        cur.day IS NOT NULL AS listed_now
    FROM (SELECT * FROM stock WHERE day = $day) AS cur
    FULL JOIN (SELECT * FROM stock WHERE day = $previous_day) AS prev USING (platform, gpu_model)
)
SELECT
    platform,
    gpu_model,
    CAST(coalesce(old_available_gpus, 0) AS INTEGER) AS old_available_gpus,
    CAST(coalesce(new_available_gpus, 0) AS INTEGER) AS new_available_gpus
FROM paired
WHERE NOT (listed_before AND old_available_gpus IS NULL)
  AND NOT (listed_now AND new_available_gpus IS NULL)
  AND (coalesce(old_available_gpus, 0) = 0) <> (coalesce(new_available_gpus, 0) = 0)
ORDER BY platform, gpu_model
