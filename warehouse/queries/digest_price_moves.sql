-- Move of each GPU model's lowest USD per GPU-hour between $previous_day and $day, at least
-- $min_abs_pct percent. Each day's offers are those its plans used (plan_crawls, spot left out as
-- in plan_candidates), and only platforms that crawled on both days count: like for like, so a
-- platform that failed today does not show up as a price rise.
WITH feeds AS (
    SELECT plan_date, platform, crawl_id
    FROM plan_crawls
    WHERE plan_date IN ($previous_day, $day) AND status IN ('ok', 'partial')
    QUALIFY count(*) OVER (PARTITION BY platform) = 2
),
daily AS (
    SELECT
        f.plan_date,
        o.gpu_model,
        min(o.price_usd_per_gpu_hour) AS min_usd_per_gpu_hour,
        arg_min(o.platform, o.price_usd_per_gpu_hour) AS platform
    FROM offers AS o
    JOIN feeds AS f ON f.crawl_id = o.crawl_id AND f.platform = o.platform
    WHERE o.gpu_model IS NOT NULL
      AND o.price_usd_per_gpu_hour > 0
      AND o.pricing_type <> 'spot'
    GROUP BY f.plan_date, o.gpu_model
)
SELECT
    cur.gpu_model,
    prev.min_usd_per_gpu_hour AS old_usd_per_gpu_hour,
    cur.min_usd_per_gpu_hour AS new_usd_per_gpu_hour,
    100 * (cur.min_usd_per_gpu_hour - prev.min_usd_per_gpu_hour) / prev.min_usd_per_gpu_hour AS pct_change,
    prev.platform AS old_platform,
    cur.platform AS new_platform
FROM daily AS cur
JOIN daily AS prev ON prev.gpu_model = cur.gpu_model AND prev.plan_date = $previous_day
WHERE cur.plan_date = $day
  AND abs(pct_change) >= $min_abs_pct
ORDER BY abs(pct_change) DESC, cur.gpu_model
