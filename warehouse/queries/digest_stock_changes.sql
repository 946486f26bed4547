-- GPU models that sold out or came back per platform between $previous_day and $day.
-- Each day's stock is from the crawl its plans used (plan_crawls), and only platforms whose crawl
-- was 'ok' on both days count: a failed or partial crawl says nothing about stock. A model the
-- platform stopped listing counts as 0 GPUs (platforms list what they rent out); a model with any
-- offer lacking a stock figure is unknown, not zero, and left out.
WITH feeds AS (
    SELECT plan_date, platform, crawl_id
    FROM plan_crawls
    WHERE plan_date IN ($previous_day, $day) AND status = 'ok'
    QUALIFY count(*) OVER (PARTITION BY platform) = 2
),
stock AS (
    SELECT
        f.plan_date,
        o.platform,
        o.gpu_model,
        CASE WHEN count(*) = count(o.available_gpus) THEN sum(o.available_gpus) END AS available_gpus
    FROM offers AS o
    JOIN feeds AS f ON f.crawl_id = o.crawl_id AND f.platform = o.platform
    WHERE o.gpu_model IS NOT NULL
    GROUP BY f.plan_date, o.platform, o.gpu_model
),
paired AS (
    SELECT
        platform,
        gpu_model,
        prev.available_gpus AS old_available_gpus,
        cur.available_gpus AS new_available_gpus,
        prev.plan_date IS NOT NULL AS listed_before,
        cur.plan_date IS NOT NULL AS listed_now
    FROM (SELECT * FROM stock WHERE plan_date = $day) AS cur
    FULL JOIN (SELECT * FROM stock WHERE plan_date = $previous_day) AS prev USING (platform, gpu_model)
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
