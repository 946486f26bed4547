-- What each price watch compares with its threshold, all watches in one pass over the offers: per
-- watch ($watch_nos, each with its GPU model in $gpu_models and its platforms in $platforms, [] for
-- every platform) and day of $days, the cheapest plannable offer of its card (judged_offers: not spot,
-- not under the price floor, as the plans read offers) on its platforms, by USD and by CNY per
-- GPU-hour, and where it is. The day's cheapest per card and platform is found once, then each
-- watch takes the least of its platforms'.
-- With $latest: instead each platform's latest usable crawl, `day` NULL (the intraday watches).
WITH watches AS (
    SELECT * FROM watch_scopes($watch_nos, $gpu_models, $platforms)
),
cheapest AS (
    SELECT
        day,
        gpu_model,
        platform,
        min(price_usd_per_gpu_hour) AS usd_per_gpu_hour,
        min(price_cny_per_gpu_hour) AS cny_per_gpu_hour
    FROM judged_offers(
        list_min(CAST($days AS DATE[])), list_max(CAST($days AS DATE[])), latest := CAST($latest AS BOOLEAN)
    )
    WHERE plannable
      AND (CAST($latest AS BOOLEAN) OR list_contains(CAST($days AS DATE[]), day))
      AND gpu_model IN (SELECT gpu_model FROM watches)
    GROUP BY ALL
)
SELECT
    w.watch_no,
    c.day,
    min(c.usd_per_gpu_hour) AS min_usd_per_gpu_hour,
    arg_min(c.platform, (c.usd_per_gpu_hour, c.platform)) AS usd_platform,
    min(c.cny_per_gpu_hour) AS min_cny_per_gpu_hour,
    arg_min(c.platform, (c.cny_per_gpu_hour, c.platform)) FILTER (c.cny_per_gpu_hour IS NOT NULL) AS cny_platform
FROM watches AS w
JOIN cheapest AS c
  ON c.gpu_model = w.gpu_model AND (len(w.platforms) = 0 OR list_contains(w.platforms, c.platform))
GROUP BY w.watch_no, c.day
ORDER BY w.watch_no, c.day
