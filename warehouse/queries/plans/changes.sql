-- What changed in the cheapest plans of $plan_date against the previous day that has plans.
-- One row per change; a plan can change in several ways at once (platform and price, say).
--   new_platform / new_gpu / new_count   the cheapest plan moved
--   price_up / price_down                rent per month moved by more than $price_move_pct percent
--   out_of_stock                         the previous plan's offer is gone or short of GPUs today
--                                        (only said when its platform crawled fine today: else unknown)
--   now_fits / no_longer_fits            an offer fits where none did, or none does any more
-- Params: $plan_date, $price_move_pct, $computed_at.
INSERT INTO plan_changes BY NAME
WITH previous_day AS (
    SELECT max(plan_date) AS plan_date
    FROM cheapest_plans
    WHERE plan_date < $plan_date
),
pairs AS (
    SELECT
        cur.model,
        cur.method,
        cur.ranking,
        prev.status AS old_status,
        cur.status AS new_status,
        prev.platform AS old_platform,
        cur.platform AS new_platform,
        prev.offer_id AS old_offer_id,
        prev.gpu_model AS old_gpu_model,
        cur.gpu_model AS new_gpu_model,
        prev.gpu_count AS old_gpu_count,
        cur.gpu_count AS new_gpu_count,
        prev.rent_usd_per_month AS old_rent_usd_per_month,
        cur.rent_usd_per_month AS new_rent_usd_per_month,
        prev.platform || ' ' || prev.gpu_model || ' x' || prev.gpu_count AS old_plan,
        cur.platform || ' ' || cur.gpu_model || ' x' || cur.gpu_count AS new_plan,
        100.0 * (cur.rent_usd_per_month - prev.rent_usd_per_month) / prev.rent_usd_per_month AS pct_change
    FROM cheapest_plans AS cur
    JOIN previous_day AS d ON TRUE
    JOIN cheapest_plans AS prev
      ON prev.plan_date = d.plan_date
     AND prev.model = cur.model
     AND prev.method = cur.method
     AND prev.ranking = cur.ranking
    WHERE cur.plan_date = $plan_date
),
both_fit AS (
    SELECT * FROM pairs WHERE old_status = 'ok' AND new_status = 'ok'
),
today_in_stock AS (
    -- unknown stock (NULL) counts as enough: only a known shortage is "out of stock"
    SELECT o.platform, o.offer_id, max(coalesce(o.available_gpus, 2147483647)) AS available_gpus
    FROM offers AS o
    JOIN plan_crawls AS c ON c.crawl_id = o.crawl_id AND c.platform = o.platform
    WHERE c.plan_date = $plan_date
      AND run_worked(c.status)
    GROUP BY o.platform, o.offer_id
),
crawled_today AS (
    SELECT platform
    FROM plan_crawls
    WHERE plan_date = $plan_date AND run_worked(status)
),
changes AS (
    SELECT model, method, ranking, 'new_platform' AS change_type,
           old_platform AS old_value, new_platform AS new_value,
           old_rent_usd_per_month, new_rent_usd_per_month, pct_change,
           old_plan || ' -> ' || new_plan AS detail
    FROM both_fit
    WHERE old_platform <> new_platform

    UNION ALL
    SELECT model, method, ranking, 'new_gpu',
           old_gpu_model, new_gpu_model,
           old_rent_usd_per_month, new_rent_usd_per_month, pct_change,
           old_plan || ' -> ' || new_plan
    FROM both_fit
    WHERE old_gpu_model <> new_gpu_model

    UNION ALL
    SELECT model, method, ranking, 'new_count',
           CAST(old_gpu_count AS VARCHAR), CAST(new_gpu_count AS VARCHAR),
           old_rent_usd_per_month, new_rent_usd_per_month, pct_change,
           old_plan || ' -> ' || new_plan
    FROM both_fit
    WHERE old_gpu_count <> new_gpu_count

    UNION ALL
    SELECT model, method, ranking, CASE WHEN pct_change > 0 THEN 'price_up' ELSE 'price_down' END,
           printf('%.2f', old_rent_usd_per_month), printf('%.2f', new_rent_usd_per_month),
           old_rent_usd_per_month, new_rent_usd_per_month, pct_change,
           printf('%s: %.2f -> %.2f USD/month (%+.1f%%)', new_plan, old_rent_usd_per_month,
                  new_rent_usd_per_month, pct_change)
    FROM both_fit
    WHERE abs(pct_change) > $price_move_pct

    UNION ALL
    SELECT p.model, p.method, p.ranking, 'out_of_stock',
           p.old_offer_id, NULL,
           p.old_rent_usd_per_month, p.new_rent_usd_per_month, p.pct_change,
           p.old_plan || ' (offer ' || p.old_offer_id || ') is no longer available'
    FROM pairs AS p
    JOIN crawled_today AS t ON t.platform = p.old_platform
    LEFT JOIN today_in_stock AS s ON s.platform = p.old_platform AND s.offer_id = p.old_offer_id
    WHERE p.old_status = 'ok'
      AND (s.offer_id IS NULL OR s.available_gpus < p.old_gpu_count)

    UNION ALL
    SELECT model, method, ranking, 'now_fits',
           NULL, new_plan,
           NULL, new_rent_usd_per_month, NULL,
           'fits now: ' || new_plan
    FROM pairs
    WHERE old_status = 'no_offer_fits' AND new_status = 'ok'

    UNION ALL
    SELECT model, method, ranking, 'no_longer_fits',
           old_plan, NULL,
           old_rent_usd_per_month, NULL, NULL,
           'no offer fits any more; was ' || old_plan
    FROM pairs
    WHERE old_status = 'ok' AND new_status = 'no_offer_fits'
)
SELECT
    CAST($plan_date AS DATE) AS change_date,
    model,
    method,
    ranking,
    change_type,
    old_value,
    new_value,
    old_rent_usd_per_month,
    new_rent_usd_per_month,
    pct_change,
    detail,
    CAST($computed_at AS TIMESTAMP) AS computed_at
FROM changes
