-- Billing units: one definition of "per GPU, per hour" for both loaders (crawls and history imports,
-- queries/load/price_staged.sql), and of what a run of so many hours is billed (the daily and the job
-- plans), so none of them can drift apart.
--   per GPU:   a price quoted per instance is divided by the GPUs in it
--   per hour:  hour 1, day 24, week 168, month 730 (= 8760 / 12: a twelfth of a 365-day year,
--              the month cloud providers bill by), year 8760 (365 days: a reserved term's year,
--              as AWS, Azure and GCP price their 1- and 3-year commitments)
CREATE OR REPLACE MACRO hours_per_billing_period(billing_period) AS
    CASE billing_period
        WHEN 'hour' THEN 1 WHEN 'day' THEN 24 WHEN 'week' THEN 168 WHEN 'month' THEN 730 WHEN 'year' THEN 8760
    END;

CREATE OR REPLACE MACRO price_per_gpu_hour(price_amount, price_per, gpu_count, billing_period) AS
    price_amount
        / (CASE price_per WHEN 'instance' THEN gpu_count ELSE 1 END)
        / hours_per_billing_period(billing_period);

-- The hours a platform bills for a run of `run_hours`: whole billing periods (an hourly offer rounds
-- up to whole hours, a daily one to days, a weekly one to weeks, a monthly one to months), and never
-- fewer than the offer's minimum term (a monthly quote costs its whole term even when the run ends
-- in a week; a run longer than the term pays the periods it needs).
CREATE OR REPLACE MACRO billed_hours(run_hours, billing_period, min_term_periods) AS
    greatest(min_term_periods, ceil(run_hours / hours_per_billing_period(billing_period)))
        * hours_per_billing_period(billing_period);

-- A cluster's bill: the offer's (`billed_hours`, every node rented as the offer sells one), and never
-- under the cluster's own minimum term (sizing/data/clusters.csv min_term_hours: a reserved block's
-- weeks; NULL or 0: none beyond the offer's).
CREATE OR REPLACE MACRO cluster_billed_hours(run_hours, billing_period, min_term_periods, cluster_min_term_hours) AS
    greatest(billed_hours(run_hours, billing_period, min_term_periods), coalesce(cluster_min_term_hours, 0));
