-- Price the staged records of one crawl or one history import (temp table load_staged) in the temp
-- view load_priced (with the temp table load_duplicates, and fx_day_rates from fx/day_rates.sql,
-- which runs on the view fx_days defined first, in fx/days.sql):
-- per GPU, per hour, in USD and CNY with the ECB rate of the observation date or the nearest
-- earlier one, and the final rejection reason (NULL = the record loads as an offer).
--
--   per GPU-hour: the macro price_per_gpu_hour (shared with history imports)
--   USD:       amount / units_per_usd of the quoted currency;  CNY: USD x units_per_usd of CNY
--   fx_date:   the older of the two rates used (they share a day when both come from the ECB)
--
-- Duplicates within a run (same crawl_id, offer_id and pricing_type): the latest observation loads
-- (the freshest price; ties: the lower price, then the record's content, so the choice never
-- depends on read order), the others are rejected. A price per GPU-hour outside
-- [min_usd_per_gpu_hour(), max_usd_per_gpu_hour()] (00_price_plausibility.sql, with the reason) is a unit
-- mistake, not a price. (A price far below the other platforms' of the card is judged when offers are
-- read, not here: the history rule, 00_price_window.sql, whose verdict must not depend on what was
-- loaded first.)
CREATE OR REPLACE TEMP TABLE load_duplicates AS
-- Found in two steps, for speed: a key's 64-bit hash groups the million rows of a large crawl much
-- faster than the strings do; only rows whose hash repeats (the duplicates, and any collisions) are
-- then grouped and ranked by the real key, so the result is the same as grouping every row by it.
WITH keyed AS (
    SELECT rowid AS staged_rowid, hash(crawl_id, offer_id, pricing_type) AS key_hash
    FROM load_staged
    WHERE reason IS NULL
),
repeated_hashes AS (
    SELECT key_hash FROM keyed GROUP BY key_hash HAVING count(*) > 1
)
SELECT staged.rowid AS duplicate_rowid
FROM load_staged AS staged
WHERE staged.rowid IN (SELECT staged_rowid FROM keyed SEMI JOIN repeated_hashes USING (key_hash))
QUALIFY row_number() OVER (
    PARTITION BY staged.crawl_id, staged.offer_id, staged.pricing_type
    ORDER BY staged.observed_at DESC, staged.price_amount, to_json(staged)
) > 1;

-- FX: fx_day_rates, built first by the shared step fx/day_rates.sql on the staged (day, currency)
-- pairs (the view fx_days).

-- Read once for offers, once for the rejected records (load_rejected, below; imports count it for
-- their runs too); every join has a small build side.
CREATE OR REPLACE TEMP VIEW load_priced AS
WITH known_currencies AS (
    SELECT DISTINCT currency FROM fx_rates
),
priced AS (
    SELECT
        s.*,
        dup.duplicate_rowid IS NOT NULL AS duplicate,
        k.currency IS NOT NULL AS currency_known,
        price_per_gpu_hour(s.price_amount, s.price_per, s.gpu_count, s.billing_period)
            / d.units_per_usd AS price_usd_per_gpu_hour,
        d.cny_per_usd,
        d.fx_date,
        d.fx_source
    FROM load_staged AS s
    LEFT JOIN load_duplicates AS dup ON dup.duplicate_rowid = s.rowid
    LEFT JOIN known_currencies AS k ON k.currency = s.price_currency
    LEFT JOIN fx_day_rates AS d
        ON d.observed_date = s.observed_date AND d.price_currency = s.price_currency AND s.reason IS NULL
)
SELECT
    * EXCLUDE (duplicate, currency_known, cny_per_usd, reason),
    price_usd_per_gpu_hour * cny_per_usd AS price_cny_per_gpu_hour,
    CASE
        WHEN reason IS NOT NULL THEN reason
        WHEN NOT currency_known THEN 'unknown currency ' || price_currency
        WHEN price_usd_per_gpu_hour IS NULL OR cny_per_usd IS NULL
            THEN 'no FX rate for ' || price_currency || ' on or before ' || observed_date
        WHEN duplicate
            THEN 'duplicate offer_id and pricing_type in this run (the latest observation loaded)'
        ELSE offer_price_problem(price_usd_per_gpu_hour)
    END AS reason
FROM priced;

-- The rejected records, priced once for both their insert (load/insert_rejected.sql) and the kinds
-- of rejection the crawl's error names (load/rejection_kinds.sql): a few rows, so the full view is
-- not evaluated again for each.
CREATE OR REPLACE TEMP TABLE load_rejected AS
SELECT * FROM load_priced WHERE reason IS NOT NULL AND NOT unparsed;
