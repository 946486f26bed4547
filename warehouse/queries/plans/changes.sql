-- The one change detector: what changed in the best plan of each $subject ('plan': every daily
-- (model, method, ranking); 'job': every job's rank-1 plan) on $plan_date against the previous day
-- with such plans (best_plans). One row per change; a plan can change in several ways at once
-- (platform and price, say). A subject new today (or gone) has nothing to compare with: no row.
--   new_platform / new_gpu / new_count   the best plan moved
--   price_up / price_down                its measure (best_plans.measure: what its ranking ranks by) moved
--                                        by at least $price_move_pct percent; only between days that
--                                        measured it alike
--   out_of_stock                         the previous plan's offer is gone or short of GPUs today
--                                        (only said when its platform crawled fine today: else unknown)
--   now_fits / no_longer_fits            a plan exists where none did, or none does any more; a job's
--   (a job: now_possible /               are named for its deadline too, and the reason says why
--    no_longer_possible)
-- An outage is not a market change: a platform whose crawl failed stands in the day's plans with its
-- last good crawl (carried: the same offers, so nothing changes) until GPUPLAN_STALE_HOURS; past that
-- its offers drop out of the day (plan_crawls: did not work, not carried). A change whose old plan's
-- platform dropped out today, or whose new plan's platform had dropped out on the previous day (it
-- came back), is that outage: no row (the digest lists the outage itself, digest/failed_crawls.sql).
-- Params: $subject, $plan_date, $price_move_pct, $computed_at.
INSERT INTO plan_changes BY NAME
WITH best AS (
    SELECT * FROM best_plans WHERE subject = $subject
),
previous_day AS (
    SELECT max(plan_date) AS plan_date
    FROM best
    WHERE plan_date < $plan_date
),
pairs AS (
    SELECT
        cur.subject,
        cur.job,
        cur.model,
        cur.method,
        cur.ranking,
        d.plan_date AS old_date,
        prev.ok AS old_ok,
        cur.ok AS new_ok,
        cur.reason AS new_reason,
        prev.platform AS old_platform,
        cur.platform AS new_platform,
        prev.offer_id AS old_offer_id,
        prev.gpu_model AS old_gpu_model,
        cur.gpu_model AS new_gpu_model,
        prev.gpu_count AS old_gpu_count,
        cur.gpu_count AS new_gpu_count,
        cur.measure,
        prev.measure_usd AS old_measure_usd,
        cur.measure_usd AS new_measure_usd,
        prev.platform || ' ' || prev.gpu_model || ' x' || prev.gpu_count AS old_plan,
        cur.platform || ' ' || cur.gpu_model || ' x' || cur.gpu_count AS new_plan,
        -- only a measure taken alike on both days moves
        CASE WHEN prev.measure = cur.measure
            THEN 100.0 * (cur.measure_usd - prev.measure_usd) / prev.measure_usd END AS pct_change
    FROM best AS cur
    JOIN previous_day AS d ON TRUE
    -- the same subject: a job by its name, a daily plan by its model, method and ranking
    JOIN best AS prev
      ON prev.plan_date = d.plan_date
     AND prev.job IS NOT DISTINCT FROM cur.job
     AND (cur.job IS NOT NULL OR (prev.model = cur.model AND prev.method = cur.method AND prev.ranking = cur.ranking))
    WHERE cur.plan_date = $plan_date
),
both_ok AS (
    SELECT * FROM pairs WHERE old_ok AND new_ok
),
today_in_stock AS (
    -- unknown stock (NULL) counts as enough: only a known shortage is "out of stock". The offers of
    -- the day's own crawls (day_runs, not carried), joined on run_day too: crawl_id, a content hash,
    -- prunes no row group, so without it this scanned every offer ever loaded (1.1 s at 18M).
    SELECT o.platform, o.offer_id, max(coalesce(o.available_gpus, 2147483647)) AS available_gpus
    FROM offers AS o
    JOIN day_runs AS r ON r.crawl_id = o.crawl_id AND r.platform = o.platform AND o.run_day = r.run_day
    WHERE r.day = CAST($plan_date AS DATE)
      AND NOT r.stale
    GROUP BY o.platform, o.offer_id
),
dropped_out AS (
    SELECT plan_date, platform
    FROM plan_crawls
    WHERE NOT run_worked(status) AND NOT carried
),
crawled_today AS (
    SELECT platform
    FROM plan_crawls
    WHERE plan_date = $plan_date AND run_worked(status)
),
changes AS (
    SELECT *, 'new_platform' AS change_type, old_platform AS old_value, new_platform AS new_value,
           old_plan || ' -> ' || new_plan AS detail
    FROM both_ok
    WHERE old_platform <> new_platform

    UNION ALL BY NAME
    SELECT *, 'new_gpu' AS change_type, old_gpu_model AS old_value, new_gpu_model AS new_value,
           old_plan || ' -> ' || new_plan AS detail
    FROM both_ok
    WHERE old_gpu_model <> new_gpu_model

    UNION ALL BY NAME
    SELECT *, 'new_count' AS change_type, CAST(old_gpu_count AS VARCHAR) AS old_value,
           CAST(new_gpu_count AS VARCHAR) AS new_value, old_plan || ' -> ' || new_plan AS detail
    FROM both_ok
    WHERE old_gpu_count <> new_gpu_count

    UNION ALL BY NAME
    SELECT
        *,
        CASE WHEN pct_change > 0 THEN 'price_up' ELSE 'price_down' END AS change_type,
        printf('%.2f', old_measure_usd) AS old_value,
        printf('%.2f', new_measure_usd) AS new_value,
        printf('%s: %.2f -> %.2f %s (%+.1f%%)', new_plan, old_measure_usd, new_measure_usd,
               CASE measure
                   WHEN 'total_usd' THEN 'USD in total'
                   WHEN 'commitment_usd' THEN 'USD for a month or the minimum term'
                   ELSE 'USD (' || measure || ')'
               END, pct_change) AS detail
    FROM both_ok
    WHERE abs(pct_change) >= $price_move_pct

    UNION ALL BY NAME
    SELECT p.*, 'out_of_stock' AS change_type, p.old_offer_id AS old_value, NULL AS new_value,
           p.old_plan || ' (offer ' || p.old_offer_id || ') is no longer available' AS detail
    FROM pairs AS p
    JOIN crawled_today AS t ON t.platform = p.old_platform
    LEFT JOIN today_in_stock AS s ON s.platform = p.old_platform AND s.offer_id = p.old_offer_id
    WHERE p.old_ok
      AND (s.offer_id IS NULL OR s.available_gpus < p.old_gpu_count)

    UNION ALL BY NAME
    SELECT
        *,
        CASE subject WHEN 'job' THEN 'now_possible' ELSE 'now_fits' END AS change_type,
        NULL AS old_value,
        new_plan AS new_value,
        CASE subject
            WHEN 'job' THEN printf('a plan now: %s, %.2f USD in total', new_plan, new_measure_usd)
            ELSE 'fits now: ' || new_plan
        END AS detail
    FROM pairs
    WHERE NOT old_ok AND new_ok

    UNION ALL BY NAME
    SELECT
        *,
        CASE subject WHEN 'job' THEN 'no_longer_possible' ELSE 'no_longer_fits' END AS change_type,
        old_plan AS old_value,
        NULL AS new_value,
        CASE subject
            WHEN 'job' THEN new_reason || '; was ' || old_plan
            ELSE 'no offer fits any more; was ' || old_plan
        END AS detail
    FROM pairs
    WHERE old_ok AND NOT new_ok
)
SELECT
    CAST($plan_date AS DATE) AS change_date,
    subject,
    job,
    model,
    method,
    ranking,
    change_type,
    old_value,
    new_value,
    old_platform,
    new_platform,
    old_gpu_model,
    new_gpu_model,
    old_gpu_count,
    new_gpu_count,
    measure,
    old_measure_usd,
    new_measure_usd,
    pct_change,
    detail,
    CAST($computed_at AS TIMESTAMP) AS computed_at
FROM changes AS c
WHERE NOT EXISTS (
    SELECT 1 FROM dropped_out AS x WHERE x.plan_date = $plan_date AND x.platform = c.old_platform
)
  AND NOT EXISTS (
    SELECT 1 FROM dropped_out AS x WHERE x.plan_date = c.old_date AND x.platform = c.new_platform
)
