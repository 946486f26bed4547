-- The checks every offer passes, crawled or imported: the second part of the statement that
-- load_stage_feed.sql (crawls) or history_stage_imported.sql (imports) begins with the CTE
-- `typed`, making the temp table load_staged: fields typed and `reason`, why the record is rejected (NULL = it loads; reasons that need FX or the whole
-- run come in load_price_staged.sql). Values must be as OfferItem spells them (ISO currency in
-- capitals, price_per 'gpu', ...): nothing is trimmed or re-cased, so a variant is rejected with
-- its value in the reason rather than guessed at. `raw` keeps the record's fields as text for the
-- rejected ones.
-- Params: $platform: the crawl's platform (the summary's); a record may omit it, not contradict
-- it. NULL for imports, whose records each name theirs.
checked AS (
    SELECT
        *,
        CASE
            WHEN unparsed THEN 'not a JSON object with offer fields'
            WHEN offer_id IS NULL OR gpu_name_raw IS NULL OR item.gpu_count IS NULL
                OR item.price_amount IS NULL OR price_currency IS NULL OR price_per IS NULL
                OR billing_period IS NULL OR pricing_type IS NULL OR item.observed_at IS NULL
                THEN 'missing required field: ' || concat_ws(', ',
                    CASE WHEN offer_id IS NULL THEN 'offer_id' END,
                    CASE WHEN gpu_name_raw IS NULL THEN 'gpu_name_raw' END,
                    CASE WHEN item.gpu_count IS NULL THEN 'gpu_count' END,
                    CASE WHEN item.price_amount IS NULL THEN 'price_amount' END,
                    CASE WHEN price_currency IS NULL THEN 'price_currency' END,
                    CASE WHEN price_per IS NULL THEN 'price_per' END,
                    CASE WHEN billing_period IS NULL THEN 'billing_period' END,
                    CASE WHEN pricing_type IS NULL THEN 'pricing_type' END,
                    CASE WHEN item.observed_at IS NULL THEN 'observed_at' END)
            WHEN $platform IS NOT NULL AND item_platform <> $platform
                THEN 'platform ' || item_platform || ' in a crawl of ' || $platform
            WHEN gpu_count IS NULL OR gpu_count <> floor(gpu_count) OR gpu_count <= 0
                OR gpu_count > 2147483647
                THEN 'gpu_count must be a whole number > 0, got ' || item.gpu_count
            WHEN price_amount IS NULL OR NOT isfinite(price_amount)
                THEN 'price_amount is not a number: ' || item.price_amount
            WHEN price_amount <= 0
                THEN 'price_amount must be > 0, got ' || item.price_amount
            WHEN price_per NOT IN ('gpu', 'instance')
                THEN 'price_per must be gpu or instance, got ' || price_per
            WHEN billing_period NOT IN ('hour', 'day', 'week', 'month')
                THEN 'billing_period must be hour, day, week or month, got ' || billing_period
            WHEN pricing_type NOT IN ('on_demand', 'spot', 'monthly_plan', 'weekly_plan', 'daily_plan', 'reserved')
                THEN 'unknown pricing_type ' || pricing_type
            WHEN observed_at_tz IS NULL
                THEN 'observed_at is not an ISO-8601 timestamp: ' || item.observed_at
            WHEN item.min_term_periods IS NOT NULL
                AND (min_term_periods IS NULL OR min_term_periods <> floor(min_term_periods)
                     OR min_term_periods < 1 OR min_term_periods > 2147483647)
                THEN 'min_term_periods must be a whole number >= 1, got ' || item.min_term_periods
            WHEN item.available_gpus IS NOT NULL
                AND (available_gpus IS NULL OR available_gpus <> floor(available_gpus)
                     OR available_gpus < 0 OR available_gpus > 2147483647)
                THEN 'available_gpus must be a whole number >= 0 or null, got ' || item.available_gpus
            WHEN item.gpu_memory_gb IS NOT NULL
                AND (gpu_memory_gb IS NULL OR NOT isfinite(gpu_memory_gb) OR gpu_memory_gb <= 0)
                THEN 'gpu_memory_gb must be a number > 0 or null, got ' || item.gpu_memory_gb
        END AS reason
    FROM typed
)
SELECT
    crawl_id,
    source,
    run_day,
    coalesce($platform, item_platform) AS platform,
    offer_id,
    region,
    gpu_name_raw,
    gpu_model,
    gpu_form,
    gpu_memory_gb,
    TRY_CAST(gpu_count AS INTEGER) AS gpu_count,
    price_amount,
    price_currency,
    price_per,
    billing_period,
    TRY_CAST(coalesce(min_term_periods, 1) AS INTEGER) AS min_term_periods,
    pricing_type,
    TRY_CAST(available_gpus AS INTEGER) AS available_gpus,
    source_url,
    -- UTC wall time. A TIMESTAMPTZ is microseconds since the epoch in UTC, so make_timestamp of
    -- them is timezone('UTC', ...) without its time-zone lookup (two per row cost ~0.25 CPU s of a
    -- 1M-offer load); +-infinity, which have no microseconds, take timezone() as before.
    CASE
        WHEN isfinite(observed_at_tz) THEN make_timestamp(epoch_us(observed_at_tz))
        ELSE timezone('UTC', observed_at_tz)
    END AS observed_at,
    CAST(CASE
        WHEN isfinite(observed_at_tz) THEN make_timestamp(epoch_us(observed_at_tz))
        ELSE timezone('UTC', observed_at_tz)
    END AS DATE) AS observed_date,
    extra,
    reason,
    unparsed,
    -- json_merge_patch onto {} drops the fields the record did not have (null)
    CASE WHEN reason IS NOT NULL AND NOT unparsed THEN json_merge_patch('{}', to_json(item)) END AS raw
FROM checked;
