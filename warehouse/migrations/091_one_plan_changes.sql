-- One change detector (issue 25): "did the best plan of this subject change?" is one question for a
-- daily (model, method, ranking) and for a user's job, answered by one statement
-- (queries/plans/changes.sql) with one comparison: a price moves when it moved by at least
-- price_move_pct, as the README says (the daily plans counted "more than", the job plans and the
-- digest's price moves "at least"). The two tables become one, plan_changes, whose rows say their
-- `subject`; every row of job_plan_changes moves into it with what it said (a view of that name,
-- definitions/00_job_plan_changes.sql, shows them as they were).
-- drops data: plan_changes and job_plan_changes are rebuilt as one table; every row is copied first
CREATE TABLE plan_changes_new (
    change_date      DATE NOT NULL,
    subject          VARCHAR NOT NULL CHECK (subject IN ('plan', 'job')),
    job              VARCHAR,            -- the job's name (subject 'job'); NULL for a daily plan
    model            VARCHAR,            -- as asked; a job's model (NULL only for a job change moved
    method           VARCHAR,            --   here by this migration whose job's plans were gone)
    ranking          VARCHAR NOT NULL,   -- 'lowest_rent' | 'lowest_cost_per_btoken'; a job's 'lowest_total'
    change_type      VARCHAR NOT NULL,   -- new_platform | new_gpu | new_count | price_up | price_down |
                                         -- out_of_stock | now_fits | no_longer_fits (a job: now_possible |
                                         -- no_longer_possible, where the reason may be its deadline)
    old_value        VARCHAR,            -- what moved, as text (platform, GPU, count, price, plan)
    new_value        VARCHAR,
    old_platform     VARCHAR,            -- the best plan on the previous day and now (NULL: none, or a
    new_platform     VARCHAR,            --   daily plan's change recorded before this migration)
    old_gpu_model    VARCHAR,
    new_gpu_model    VARCHAR,
    old_gpu_count    INTEGER,
    new_gpu_count    INTEGER,
    measure          VARCHAR NOT NULL,   -- what a price move compares: 'rent_usd_per_month' | 'total_usd' (a job)
    old_measure_usd  DOUBLE,
    new_measure_usd  DOUBLE,
    pct_change       DOUBLE,             -- of the measure, in percent
    detail           VARCHAR,
    computed_at      TIMESTAMP NOT NULL
);

INSERT INTO plan_changes_new BY NAME
SELECT
    change_date,
    'plan' AS subject,
    model,
    method,
    ranking,
    change_type,
    old_value,
    new_value,
    'rent_usd_per_month' AS measure,
    old_rent_usd_per_month AS old_measure_usd,
    new_rent_usd_per_month AS new_measure_usd,
    pct_change,
    detail,
    computed_at
FROM plan_changes;

-- A job change's old_value/new_value as the one detector writes them.
INSERT INTO plan_changes_new BY NAME
WITH asked AS (
    SELECT plan_date, job, any_value(model) AS model, any_value(method) AS method
    FROM job_plans
    WHERE rank = 1
    GROUP BY plan_date, job
)
SELECT
    c.change_date,
    'job' AS subject,
    c.job,
    a.model,
    a.method,
    'lowest_total' AS ranking,
    c.change_type,
    CASE c.change_type
        WHEN 'new_platform' THEN c.old_platform
        WHEN 'new_gpu' THEN c.old_gpu_model
        WHEN 'new_count' THEN CAST(c.old_gpu_count AS VARCHAR)
        WHEN 'price_up' THEN printf('%.2f', c.old_total_usd)
        WHEN 'price_down' THEN printf('%.2f', c.old_total_usd)
        WHEN 'no_longer_possible' THEN c.old_platform || ' ' || c.old_gpu_model || ' x' || c.old_gpu_count
    END AS old_value,
    CASE c.change_type
        WHEN 'new_platform' THEN c.new_platform
        WHEN 'new_gpu' THEN c.new_gpu_model
        WHEN 'new_count' THEN CAST(c.new_gpu_count AS VARCHAR)
        WHEN 'price_up' THEN printf('%.2f', c.new_total_usd)
        WHEN 'price_down' THEN printf('%.2f', c.new_total_usd)
        WHEN 'now_possible' THEN c.new_platform || ' ' || c.new_gpu_model || ' x' || c.new_gpu_count
    END AS new_value,
    c.old_platform,
    c.new_platform,
    c.old_gpu_model,
    c.new_gpu_model,
    c.old_gpu_count,
    c.new_gpu_count,
    'total_usd' AS measure,
    c.old_total_usd AS old_measure_usd,
    c.new_total_usd AS new_measure_usd,
    c.pct_change,
    c.detail,
    c.computed_at
FROM job_plan_changes AS c
LEFT JOIN asked AS a ON a.plan_date = c.change_date AND a.job = c.job;

DROP TABLE plan_changes;
DROP TABLE job_plan_changes;
ALTER TABLE plan_changes_new RENAME TO plan_changes;
