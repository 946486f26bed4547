-- The changed plans of $change_date, one row each: per job (plan_changes of subject 'job', its rank-1
-- plan) and per (model, method, ranking) (subject 'plan'), jobs first, then smallest model first,
-- 'lowest_rent' first. plan_changes keeps a row per kind of change (new platform, new GPU, price...),
-- the view changed_plans one row per plan change; this is what the digest says of them: the old plan
-- (the previous day with plans, as the change detector compares) and the new one, the ranking's own measure on both days as the best plan stores
-- it (best_plans: measure, measure_usd, measure_cny), and the facts behind the change:
--   old_offer_now_*          the old plan's offer today (NULL: not among today's plannable offers)
--   old_platform_listed_now  the old plan's platform has offers today (FALSE: it did not crawl)
--   new_offer_before_*       the new plan's offer on the previous day (NULL: it is new)
--   old_region, new_region   each plan's offer's region on its day (NULL: the platform names none)
-- Offers are the days' plannable ones (judged_offers), as the plans read them.
WITH changed AS (
    SELECT subject, job, model, method, ranking, change_types
    FROM changed_plans
    WHERE change_date = $change_date
),
-- the previous day with plans of each subject, as the change detector compares
previous_days AS (
    SELECT subject, max(plan_date) AS previous_date
    FROM best_plans
    WHERE plan_date < $change_date
    GROUP BY subject
),
-- the same subject: a job by its name, a daily plan by its model, method and ranking
sides AS (
    SELECT
        c.subject,
        c.job,
        coalesce(cur.model, prev.model, c.model) AS model,
        coalesce(cur.method, prev.method, c.method) AS method,
        c.ranking,
        coalesce(cur.measure, prev.measure) AS measure,
        c.change_types,
        d.previous_date,
        coalesce(cur.params, prev.params) AS params,
        prev.ok AS old_ok,
        prev.platform AS old_platform,
        prev.offer_id AS old_offer_id,
        prev.pricing_type AS old_pricing_type,
        prev.billing_period AS old_billing_period,
        prev.gpu_model AS old_gpu_model,
        prev.gpu_count AS old_gpu_count,
        prev.nodes AS old_nodes,
        prev.fabric AS old_fabric,
        prev.usd_per_gpu_hour AS old_usd_per_gpu_hour,
        prev.cny_per_gpu_hour AS old_cny_per_gpu_hour,
        prev.measure_usd AS old_measure_usd,
        prev.measure_cny AS old_measure_cny,
        cur.ok AS new_ok,
        cur.platform AS new_platform,
        cur.offer_id AS new_offer_id,
        cur.pricing_type AS new_pricing_type,
        cur.billing_period AS new_billing_period,
        cur.gpu_model AS new_gpu_model,
        cur.gpu_count AS new_gpu_count,
        cur.nodes AS new_nodes,
        cur.fabric AS new_fabric,
        cur.usd_per_gpu_hour AS new_usd_per_gpu_hour,
        cur.cny_per_gpu_hour AS new_cny_per_gpu_hour,
        cur.measure_usd AS new_measure_usd,
        cur.measure_cny AS new_measure_cny,
        -- only a measure taken alike on both days moves (as the change detector compares)
        CASE WHEN prev.measure = cur.measure
            THEN 100 * (cur.measure_usd - prev.measure_usd) / prev.measure_usd END AS pct_change
    FROM changed AS c
    LEFT JOIN previous_days AS d ON d.subject = c.subject
    LEFT JOIN best_plans AS cur
      ON cur.subject = c.subject AND cur.plan_date = $change_date
     AND cur.job IS NOT DISTINCT FROM c.job
     AND (c.job IS NOT NULL OR (cur.model = c.model AND cur.method = c.method AND cur.ranking = c.ranking))
    LEFT JOIN best_plans AS prev
      ON prev.subject = c.subject AND prev.plan_date = d.previous_date
     AND prev.job IS NOT DISTINCT FROM c.job
     AND (c.job IS NOT NULL OR (prev.model = c.model AND prev.method = c.method AND prev.ranking = c.ranking))
),
judged AS MATERIALIZED (
    SELECT day, platform, offer_id, pricing_type, price_usd_per_gpu_hour, price_cny_per_gpu_hour,
           available_gpus, region
    FROM judged_offers((SELECT min(previous_date) FROM sides), CAST($change_date AS DATE))
    WHERE plannable AND (day = $change_date OR day IN (SELECT previous_date FROM sides))
),
offer_days AS (
    SELECT
        day,
        platform,
        offer_id,
        pricing_type,
        min(price_usd_per_gpu_hour) AS usd_per_gpu_hour,
        arg_min(price_cny_per_gpu_hour, price_usd_per_gpu_hour) AS cny_per_gpu_hour,
        -- unknown stock (any NULL) stays unknown
        CASE WHEN count(*) = count(available_gpus) THEN max(available_gpus) END AS available_gpus,
        arg_min(region, price_usd_per_gpu_hour) AS region
    FROM judged
    GROUP BY day, platform, offer_id, pricing_type
),
listed AS (
    SELECT DISTINCT day, platform FROM judged
)
SELECT
    s.* EXCLUDE (params),
    coalesce(s.old_platform = s.new_platform AND s.old_offer_id = s.new_offer_id
             AND s.old_pricing_type = s.new_pricing_type, FALSE) AS same_offer,
    o_now.usd_per_gpu_hour AS old_offer_now_usd_per_gpu_hour,
    o_now.cny_per_gpu_hour AS old_offer_now_cny_per_gpu_hour,
    o_now.available_gpus AS old_offer_now_available_gpus,
    l_now.platform IS NOT NULL AS old_platform_listed_now,
    n_then.usd_per_gpu_hour AS new_offer_before_usd_per_gpu_hour,
    n_then.cny_per_gpu_hour AS new_offer_before_cny_per_gpu_hour,
    o_then.region AS old_region,
    n_now.region AS new_region
FROM sides AS s
LEFT JOIN offer_days AS o_now
  ON o_now.day = $change_date AND o_now.platform = s.old_platform AND o_now.offer_id = s.old_offer_id
 AND o_now.pricing_type = s.old_pricing_type
LEFT JOIN listed AS l_now ON l_now.day = $change_date AND l_now.platform = s.old_platform
LEFT JOIN offer_days AS n_then
  ON n_then.day = s.previous_date AND n_then.platform = s.new_platform AND n_then.offer_id = s.new_offer_id
 AND n_then.pricing_type = s.new_pricing_type
LEFT JOIN offer_days AS o_then
  ON o_then.day = s.previous_date AND o_then.platform = s.old_platform AND o_then.offer_id = s.old_offer_id
 AND o_then.pricing_type = s.old_pricing_type
LEFT JOIN offer_days AS n_now
  ON n_now.day = $change_date AND n_now.platform = s.new_platform AND n_now.offer_id = s.new_offer_id
 AND n_now.pricing_type = s.new_pricing_type
ORDER BY s.subject = 'plan', s.job, s.params NULLS LAST, s.model, s.method, s.ranking <> 'lowest_rent', s.ranking
