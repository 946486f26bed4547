-- Per plan day in [$first, $last]: cheapest-plan rows, those that found an offer, and plan changes.
WITH plan_rows AS (
    SELECT plan_date, count(*) AS plans, count(*) FILTER (status = 'ok') AS plans_ok
    FROM cheapest_plans
    WHERE plan_date BETWEEN $first AND $last
    GROUP BY plan_date
),
change_rows AS (
    SELECT change_date AS plan_date, count(*) AS changes
    FROM plan_changes
    WHERE change_date BETWEEN $first AND $last
    GROUP BY change_date
)
SELECT p.plan_date, p.plans, p.plans_ok, coalesce(c.changes, 0) AS changes
FROM plan_rows AS p
LEFT JOIN change_rows AS c USING (plan_date)
ORDER BY p.plan_date
