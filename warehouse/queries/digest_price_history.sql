-- The lowest USD per GPU-hour per plan day in [$first_day, $last_day] for the main GPU models:
-- "main" = offered by the most platforms in that window (then the most offers), at most $max_models.
-- A day's offers are those its plans used (plan_crawls), spot left out as in plan_candidates.
WITH priced AS (
    SELECT c.plan_date, o.platform, o.gpu_model, o.price_usd_per_gpu_hour
    FROM offers AS o
    JOIN plan_crawls AS c ON c.crawl_id = o.crawl_id AND c.platform = o.platform
    WHERE c.plan_date BETWEEN $first_day AND $last_day
      AND o.gpu_model IS NOT NULL
      AND o.price_usd_per_gpu_hour > 0
      AND o.pricing_type <> 'spot'
),
main_models AS (
    SELECT gpu_model
    FROM priced
    GROUP BY gpu_model
    ORDER BY count(DISTINCT platform) DESC, count(*) DESC, gpu_model
    LIMIT $max_models
)
SELECT gpu_model, plan_date AS day, min(price_usd_per_gpu_hour) AS min_usd_per_gpu_hour
FROM priced
SEMI JOIN main_models USING (gpu_model)
GROUP BY gpu_model, plan_date
ORDER BY gpu_model, day
