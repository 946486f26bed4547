-- What a plausible price per GPU-hour is: one rule for every loader (crawls and history imports,
-- queries/load/price_staged.sql) and for the offers check (pipelines/checks.py). One of the
-- price-plausibility rules listed in docs/plausibility.md.
-- Below a cent no GPU rents (marketplace floors are about 0.05 USD for old consumer cards); above
-- 100 USD is ten times the dearest on-demand GPU-hour of 2026 (a B200 at 6-10 USD on Lambda and
-- RunPod). Outside is a unit mistake, not a price: a monthly price quoted as hourly, cents read
-- as dollars, a wrong currency. Such a record is rejected (kept in rejected_offers with the
-- reason), never loaded.
CREATE OR REPLACE MACRO min_usd_per_gpu_hour() AS CAST(0.01 AS DOUBLE);
CREATE OR REPLACE MACRO max_usd_per_gpu_hour() AS CAST(100 AS DOUBLE);

-- Why a priced record is not a plausible price, or NULL when it is.
CREATE OR REPLACE MACRO offer_price_problem(price_usd_per_gpu_hour) AS
    CASE
        WHEN price_usd_per_gpu_hour > max_usd_per_gpu_hour()
            THEN printf('absurd price: %g USD per GPU-hour (limit %g)',
                        round(price_usd_per_gpu_hour, 2), max_usd_per_gpu_hour())
        WHEN price_usd_per_gpu_hour < min_usd_per_gpu_hour()
            THEN printf('absurd price: %g USD per GPU-hour (under %g)',
                        round(price_usd_per_gpu_hour, 4), min_usd_per_gpu_hour())
    END;
