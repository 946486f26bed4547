-- Per plan day in [$first, $last]: cheapest-plan rows, those that found an offer, changed plans of
-- the daily plans (changed_plans: one per plan change) (a job's are its own, subject 'job'), and
-- offers the day's plans left out as implausibly cheap (plan_excluded_offers).
WITH plan_rows AS (
    SELECT plan_date, count(*) AS plans, count(*) FILTER (status = 'ok') AS plans_ok
    FROM cheapest_plans
    WHERE plan_date BETWEEN $first AND $last
    GROUP BY plan_date
),
change_rows AS (
    SELECT change_date AS plan_date, count(*) AS changes
    FROM changed_plans
    WHERE change_date BETWEEN $first AND $last AND subject = 'plan'
    GROUP BY change_date
),
excluded_rows AS (
    SELECT plan_date, count(*) AS offers_excluded
    FROM plan_excluded_offers
    WHERE plan_date BETWEEN $first AND $last
    GROUP BY plan_date
)
SELECT
    p.plan_date,
    p.plans,
    p.plans_ok,
    coalesce(c.changes, 0) AS changes,
    coalesce(x.offers_excluded, 0) AS offers_excluded
FROM plan_rows AS p
LEFT JOIN change_rows AS c USING (plan_date)
LEFT JOIN excluded_rows AS x USING (plan_date)
ORDER BY p.plan_date
