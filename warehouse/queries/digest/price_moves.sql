-- Move of each GPU model's lowest USD per GPU-hour between $previous_day and $day, at least
-- $min_abs_pct percent. Each day's offers are the ones its plans may use (judged_offers' plannable:
-- not spot, not under the price floor), and only platforms with offers on both days count: like for
-- like, so a platform that failed today does not show up as a price rise. CNY: the same offers'.
WITH plannable AS (
    SELECT day, platform, gpu_model, price_usd_per_gpu_hour, price_cny_per_gpu_hour
    FROM judged_offers(CAST($previous_day AS DATE), CAST($day AS DATE))
    WHERE plannable AND day IN ($previous_day, $day)
),
both_days AS (
    SELECT platform FROM plannable GROUP BY platform HAVING count(DISTINCT day) = 2
),
daily AS (
    SELECT
        day,
        gpu_model,
        min(price_usd_per_gpu_hour) AS min_usd_per_gpu_hour,
        arg_min(platform, price_usd_per_gpu_hour) AS platform,
        arg_min(price_cny_per_gpu_hour, price_usd_per_gpu_hour) AS cny_per_gpu_hour
    FROM plannable
    SEMI JOIN both_days USING (platform)
    GROUP BY day, gpu_model
)
SELECT
    cur.gpu_model,
    prev.min_usd_per_gpu_hour AS old_usd_per_gpu_hour,
    cur.min_usd_per_gpu_hour AS new_usd_per_gpu_hour,
    100 * (cur.min_usd_per_gpu_hour - prev.min_usd_per_gpu_hour) / prev.min_usd_per_gpu_hour AS pct_change,
    prev.platform AS old_platform,
    cur.platform AS new_platform,
    prev.cny_per_gpu_hour AS old_cny_per_gpu_hour,
    cur.cny_per_gpu_hour AS new_cny_per_gpu_hour
FROM daily AS cur
JOIN daily AS prev ON prev.gpu_model = cur.gpu_model AND prev.day = $previous_day
WHERE cur.day = $day
  AND abs(pct_change) >= $min_abs_pct
ORDER BY abs(pct_change) DESC, cur.gpu_model
