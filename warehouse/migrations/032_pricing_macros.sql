-- One definition of "per GPU, per hour" for every loader (crawls: load_price_staged.sql; history
-- imports: history_price_imported.sql), so the two can never drift apart.
--   per GPU:   a price quoted per instance is divided by the GPUs in it
--   per hour:  hour 1, day 24, week 168, month 730 (= 8760 / 12: a twelfth of a 365-day year,
--              the month cloud providers bill by)
CREATE MACRO hours_per_billing_period(billing_period) AS
    CASE billing_period WHEN 'hour' THEN 1 WHEN 'day' THEN 24 WHEN 'week' THEN 168 WHEN 'month' THEN 730 END;

CREATE MACRO price_per_gpu_hour(price_amount, price_per, gpu_count, billing_period) AS
    price_amount
        / (CASE price_per WHEN 'instance' THEN gpu_count ELSE 1 END)
        / hours_per_billing_period(billing_period);
