-- What the daily plans are computed from, kept per plan_date so a day's plans can be explained later.

-- The crawl of each platform that feeds a day's plans: the pipeline records every crawl it loads from
-- that day's crawl folder, so "the day's offers" never depends on clocks or time-zone arithmetic.
CREATE TABLE plan_crawls (
    plan_date    DATE NOT NULL,
    platform     VARCHAR NOT NULL,
    crawl_id     VARCHAR NOT NULL,   -- crawl_runs.crawl_id
    status       VARCHAR NOT NULL,   -- the crawl's status: ok | failed | partial | skipped
    recorded_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (plan_date, platform)
);

-- The sizing model's answer for each (model, method, GPU model, GPU count) the day's plans may use.
-- One row per (plan_date, model, method, gpu_model, gpu_count), checked by warehouse.plans on the way
-- in: a primary key would make replacing a day's ~40k rows (delete, insert) about ten times slower.
CREATE TABLE plan_requirements (
    plan_date          DATE NOT NULL,
    model              VARCHAR NOT NULL,  -- as asked ('7B', 'llama-3.1-70b')
    model_preset       VARCHAR,           -- the shape the sizing model used
    params             DOUBLE,            -- parameter count
    method             VARCHAR NOT NULL,
    gpu_model          VARCHAR NOT NULL,  -- canonical (gpus.gpu_model)
    gpu_count          INTEGER NOT NULL,  -- GPUs in the whole job
    gpus_per_node      INTEGER NOT NULL,  -- from the sizing catalog: more GPUs than this means several nodes
    fits               BOOLEAN NOT NULL,
    zero_stage         INTEGER,
    per_gpu_memory_gb  DOUBLE,
    tokens_per_second  DOUBLE,            -- all GPUs together
    mfu                DOUBLE,
    multi_node         BOOLEAN NOT NULL
);

-- The configurations that fit, as a reader compares them: per (model, method, GPU model), whichever
-- platform sells it, the one with the lowest rent for a month of training and the one with the lowest
-- cost per billion tokens (one row when they agree). The day's cheapest plans are picked from these.
CREATE TABLE plan_candidates (
    plan_date                     DATE NOT NULL,
    model                         VARCHAR NOT NULL,
    model_preset                  VARCHAR,
    params                        DOUBLE,
    method                        VARCHAR NOT NULL,
    platform                      VARCHAR NOT NULL,
    offer_id                      VARCHAR NOT NULL,
    region                        VARCHAR,
    gpu_model                     VARCHAR NOT NULL,
    unit_gpu_count                INTEGER NOT NULL,  -- GPUs in one rentable unit of the offer
    units_rented                  INTEGER NOT NULL,
    gpu_count                     INTEGER NOT NULL,  -- units_rented x unit_gpu_count
    nodes                         INTEGER NOT NULL,
    pricing_type                  VARCHAR NOT NULL,
    billing_period                VARCHAR NOT NULL,
    hourly_rentable               BOOLEAN NOT NULL,
    commitment_hours              INTEGER NOT NULL,  -- the least paid for: a month (730 h) or the minimum term
    stock_known                   BOOLEAN NOT NULL,
    available_gpus                INTEGER,
    zero_stage                    INTEGER,
    per_gpu_memory_gb             DOUBLE,
    multi_node                    BOOLEAN NOT NULL,
    rent_usd_per_hour             DOUBLE NOT NULL,
    rent_cny_per_hour             DOUBLE,
    rent_usd_per_month            DOUBLE NOT NULL,   -- 730 h
    rent_cny_per_month            DOUBLE,
    commitment_usd                DOUBLE NOT NULL,   -- rent over commitment_hours: one month of training
    commitment_cny                DOUBLE,
    tokens_per_day                DOUBLE NOT NULL,
    cost_usd_per_billion_tokens   DOUBLE NOT NULL,
    cost_cny_per_billion_tokens   DOUBLE,
    computed_at                   TIMESTAMP NOT NULL
);
