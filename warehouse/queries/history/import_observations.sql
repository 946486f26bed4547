-- The daily observations CSV (cherielilili/gpu-pricing-tracker `data/observations.csv`; what each
-- column means and the choices below: scrapers/history/observations.py) read into import_rows
-- (history/import_staging.sql) in one statement: DuckDB reads the file, no row becomes a Python object.
-- One offer per row, priced at the row's minimum per GPU-hour; its median, maximum, n_offers,
-- fetched_at and provider in `extra`; observed at the row's date 00:00 UTC; no stock figure. A row
-- that fails a check below is refused with the first reason, its cells kept as JSON. The md5 of a row
-- is of its cells as read.
-- Registered frames (scrapers.history.observations.lookups): import_platforms (provider, platform:
-- the platform slug of each non-blank provider), import_gpus (name, gpu_model, gpu_form,
-- gpu_memory_gb: the canonical card of each GPU name). Params: $path; $columns, the header's
-- columns, each read as text (no sniffing: a row that does not fit is an error naming its line); $observed_on and $platform
-- (NULL: every day, every platform) keep only that day or platform slug; $latest, the latest day an
-- observation can be dated (scrapers.history.paths.latest_real_day); $max_count, the largest count
-- the warehouse stores.
-- extra's numbers: a price a decimal, a count a whole number where it is one; a cell that is no
-- finite number has no key in extra (as a field that is null has none)
CREATE OR REPLACE TEMP MACRO observations_price(text) AS
    CASE WHEN isfinite(TRY_CAST(text AS DOUBLE)) THEN TRY_CAST(text AS DOUBLE) END;
CREATE OR REPLACE TEMP MACRO observations_count(text) AS
    CASE
        WHEN regexp_full_match(text, '\s*[+-]?[0-9]+\s*') THEN CAST(TRY_CAST(text AS BIGINT) AS JSON)
        WHEN isfinite(TRY_CAST(text AS DOUBLE)) THEN CAST(TRY_CAST(text AS DOUBLE) AS JSON)
    END;

INSERT INTO import_rows BY NAME
WITH file AS (
    SELECT cells, md5_number(concat_ws(chr(31), *COLUMNS(*))) AS md5
    FROM (
        SELECT coalesce(COLUMNS(*), '')
        FROM read_csv(
            $path, header = true, auto_detect = false, columns = $columns, delim = ',', quote = '"', escape = '"'
        )
    ) AS cells
),
typed AS (
    SELECT
        f.cells,
        f.md5,
        CAST(TRY_STRPTIME(f.cells.date, '%Y-%m-%d') AS DATE) AS day,
        p.platform,
        TRY_CAST(f.cells.gpu_count AS DOUBLE) AS count,
        TRY_CAST(f.cells.price_min_usd AS DOUBLE) AS price,
        observations_price(f.cells.price_median_usd) AS median,
        observations_price(f.cells.price_max_usd) AS maximum,
        observations_count(f.cells.n_offers) AS offers
    FROM file AS f
    LEFT JOIN import_platforms AS p ON p.provider = f.cells.provider
),
judged AS (
    SELECT
        *,
        day > CAST($latest AS DATE) AS future,
        CASE
            WHEN day IS NULL THEN 'date is not YYYY-MM-DD'
            WHEN day > CAST($latest AS DATE) THEN 'date is in the future'
            WHEN platform IS NULL THEN 'provider is empty'
            WHEN regexp_full_match(cells.gpu_model, '\s*') THEN 'gpu_model is empty'
            WHEN count IS NULL OR NOT isfinite(count) OR count <= 0 OR count <> floor(count)
                THEN 'gpu_count is not a positive whole number'
            WHEN count > $max_count THEN 'gpu_count is over ' || $max_count
            WHEN price IS NULL OR isnan(price) THEN 'price_min_usd is not a number'
            WHEN price <= 0 THEN 'price_min_usd is not positive'
            WHEN cells.rental_type NOT IN ('on_demand', 'spot') THEN 'rental_type is neither on_demand nor spot'
        END AS reason
    FROM typed
    WHERE ($observed_on IS NULL OR day = CAST($observed_on AS DATE))
      AND ($platform IS NULL OR platform = $platform)
)
SELECT
    j.platform,
    -- a day in the future is no run of ours: its row is refused under the file's first run
    CAST(CASE WHEN NOT j.future THEN j.day END AS VARCHAR) AS day,
    CASE WHEN j.reason IS NULL THEN struct_update(
        offer_record(),
        platform := j.platform,
        offer_id := j.cells.gpu_model || '/' || j.cells.gpu_count || 'x/' || j.cells.region || '/'
            || j.cells.rental_type,
        region := CASE WHEN NOT regexp_full_match(j.cells.region, '\s*') THEN j.cells.region END,
        gpu_name_raw := j.cells.gpu_model,
        gpu_model := g.gpu_model,
        gpu_form := g.gpu_form,
        gpu_memory_gb := CAST(g.gpu_memory_gb AS VARCHAR),
        gpu_count := CAST(CAST(j.count AS BIGINT) AS VARCHAR),
        price_amount := CAST(j.price AS VARCHAR),
        price_currency := 'USD',
        price_per := 'gpu',
        billing_period := 'hour',
        min_term_periods := '1',
        pricing_type := j.cells.rental_type,
        source_url := j.cells.source_url,
        observed_at := strftime(j.day, '%Y-%m-%d') || 'T00:00:00Z',
        extra := CASE
            WHEN j.median IS NOT NULL AND j.maximum IS NOT NULL AND j.offers IS NOT NULL
                THEN json_object(
                    'price_median_usd_per_gpu_hour', j.median, 'price_max_usd_per_gpu_hour', j.maximum,
                    'n_offers', j.offers, 'fetched_at', j.cells.fetched_at, 'provider', j.cells.provider)
            -- a number missing: json_merge_patch leaves its key out (slower, so only then)
            ELSE json_merge_patch('{}', json_object(
                'price_median_usd_per_gpu_hour', j.median, 'price_max_usd_per_gpu_hour', j.maximum,
                'n_offers', j.offers, 'fetched_at', j.cells.fetched_at, 'provider', j.cells.provider))
        END
    ) END AS item,
    j.md5,
    CASE WHEN j.reason IS NOT NULL THEN CAST(to_json(j.cells) AS VARCHAR) END AS raw,
    j.reason
FROM judged AS j
LEFT JOIN import_gpus AS g ON g.name = j.cells.gpu_model
