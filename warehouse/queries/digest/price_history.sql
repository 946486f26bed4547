-- The lowest USD (and CNY) per GPU-hour per day in [$first_day, $last_day] for the main GPU models:
-- "main" = offered by the most platforms in that window (then the most offers), at most $max_models.
-- A day's offers are the ones its plans may use (judged_offers' plannable: not spot, not under the
-- price floor): a placeholder price is never a point of the chart.
WITH priced AS (
    SELECT day, platform, gpu_model, price_usd_per_gpu_hour, price_cny_per_gpu_hour
    FROM judged_offers(CAST($first_day AS DATE), CAST($last_day AS DATE))
    WHERE plannable
),
main_models AS (
    SELECT gpu_model
    FROM priced
    GROUP BY gpu_model
    ORDER BY count(DISTINCT platform) DESC, count(*) DESC, gpu_model
    LIMIT $max_models
)
SELECT
    gpu_model,
    day,
    min(price_usd_per_gpu_hour) AS min_usd_per_gpu_hour,
    min(price_cny_per_gpu_hour) AS min_cny_per_gpu_hour
FROM priced
SEMI JOIN main_models USING (gpu_model)
GROUP BY gpu_model, day
ORDER BY gpu_model, day
