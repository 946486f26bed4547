-- Core history tables. Timestamps are UTC (TIMESTAMP without zone, named *_at).
-- Money columns carry currency and unit in their names.

CREATE TABLE crawl_runs (
    crawl_id        VARCHAR PRIMARY KEY,   -- sha256 of platform + feed bytes: reloading a crawl is a no-op
    platform        VARCHAR NOT NULL,
    source          VARCHAR NOT NULL DEFAULT 'crawl',  -- 'crawl', or 'import:<format>' for history imports
    status          VARCHAR NOT NULL CHECK (status IN ('ok', 'failed', 'partial', 'skipped')),
    error           VARCHAR,
    started_at      TIMESTAMP,
    finished_at     TIMESTAMP,
    items_yielded   INTEGER NOT NULL DEFAULT 0,
    items_rejected  INTEGER NOT NULL DEFAULT 0,
    offers_loaded   INTEGER NOT NULL DEFAULT 0,
    offline         BOOLEAN NOT NULL DEFAULT FALSE,
    source_file     VARCHAR,
    loaded_at       TIMESTAMP NOT NULL
);

CREATE TABLE offers (
    crawl_id                VARCHAR NOT NULL,
    platform                VARCHAR NOT NULL,
    source                  VARCHAR NOT NULL DEFAULT 'crawl',
    offer_id                VARCHAR NOT NULL,
    region                  VARCHAR,
    gpu_name_raw            VARCHAR NOT NULL,
    gpu_model               VARCHAR,          -- canonical (gpus.gpu_model); NULL = unknown name, kept and flagged
    gpu_form                VARCHAR,          -- SXM | PCIe | NVL | NULL
    gpu_memory_gb           DOUBLE,
    gpu_count               INTEGER NOT NULL, -- GPUs in one rentable unit
    price_amount            DOUBLE NOT NULL,  -- as quoted
    price_currency          VARCHAR NOT NULL,
    price_per               VARCHAR NOT NULL, -- 'gpu' | 'instance'
    billing_period          VARCHAR NOT NULL, -- 'hour' | 'day' | 'week' | 'month'
    min_term_periods        INTEGER NOT NULL DEFAULT 1,
    pricing_type            VARCHAR NOT NULL, -- on_demand | spot | monthly_plan | weekly_plan | daily_plan | reserved
    hourly_rentable         BOOLEAN NOT NULL, -- FALSE for day/week/month-only offers: never rentable by the hour
    price_usd_per_gpu_hour  DOUBLE,           -- derived: 730 h a month, 168 a week, 24 a day
    price_cny_per_gpu_hour  DOUBLE,
    fx_date                 DATE,             -- the rate used (nearest earlier ECB date)
    fx_source               VARCHAR,
    available_gpus          INTEGER,          -- NULL = the platform does not say (unknown is not zero)
    source_url              VARCHAR,
    observed_at             TIMESTAMP NOT NULL,
    observed_date           DATE NOT NULL,
    extra                   JSON
);

CREATE TABLE rejected_offers (
    crawl_id     VARCHAR NOT NULL,
    platform     VARCHAR NOT NULL,
    raw          VARCHAR NOT NULL,   -- the item as received
    reason       VARCHAR NOT NULL,
    rejected_at  TIMESTAMP NOT NULL
);

CREATE TABLE fx_rates (
    rate_date      DATE NOT NULL,
    currency       VARCHAR NOT NULL,  -- ISO 4217
    units_per_usd  DOUBLE NOT NULL,   -- e.g. CNY: 7.1 means 1 USD = 7.1 CNY
    source         VARCHAR NOT NULL,
    PRIMARY KEY (rate_date, currency)
);

-- Owned by the sizing package (sizing/data); the warehouse mirrors it for SQL users.
CREATE TABLE gpus (
    gpu_model                      VARCHAR PRIMARY KEY,
    family                         VARCHAR NOT NULL,
    form                           VARCHAR,
    memory_gb                      DOUBLE NOT NULL,
    bf16_dense_tflops              DOUBLE,
    memory_bandwidth_gb_per_s      DOUBLE,
    interconnect                   VARCHAR,
    interconnect_gb_per_s          DOUBLE,
    verified                       BOOLEAN,
    source                         VARCHAR
);
