-- Plans for the user's own jobs (GPUPLAN_JOBS, issue 17): each day, every job's best plans, and what
-- changed against the previous day with job plans. Written by the daily run; the digest reports the
-- changes first. Money in USD and CNY is what is actually paid, by the platform's billing (whole
-- hours, days, weeks or months; a monthly quote costs at least its minimum term).

CREATE TABLE job_plans (
    plan_date               DATE NOT NULL,
    job                     VARCHAR NOT NULL,   -- the job's name in the jobs file
    rank                    INTEGER NOT NULL,   -- 1 = the cheapest plan that meets the job's deadline
    status                  VARCHAR NOT NULL,   -- 'ok' | 'no_plan' (then `reason` says why; rank 1)
    reason                  VARCHAR,
    model                   VARCHAR NOT NULL,
    method                  VARCHAR NOT NULL,
    tokens                  DOUBLE NOT NULL,    -- tokens of one epoch
    epochs                  DOUBLE NOT NULL,
    platform                VARCHAR,
    offer_id                VARCHAR,
    region                  VARCHAR,
    gpu_model               VARCHAR,
    gpu_count               INTEGER,
    nodes                   INTEGER,
    billing_period          VARCHAR,            -- hour | day | week | month
    pricing_type            VARCHAR,
    stock_known             BOOLEAN,
    available_gpus          INTEGER,
    price_usd_per_gpu_hour  DOUBLE,
    mfu                     DOUBLE,
    tokens_per_second       DOUBLE,             -- all GPUs together
    train_days              DOUBLE,             -- tokens x epochs / throughput
    finish                  TIMESTAMP,          -- UTC, if started when planned
    total_usd               DOUBLE,             -- what is paid, by the platform's billing
    total_cny               DOUBLE,
    computed_at             TIMESTAMP NOT NULL
);

CREATE TABLE job_plan_changes (
    change_date     DATE NOT NULL,
    job             VARCHAR NOT NULL,
    change_type     VARCHAR NOT NULL,   -- new_platform | new_gpu | new_count | price_up | price_down | now_possible | no_longer_possible
    old_platform    VARCHAR,
    new_platform    VARCHAR,
    old_gpu_model   VARCHAR,
    new_gpu_model   VARCHAR,
    old_gpu_count   INTEGER,
    new_gpu_count   INTEGER,
    old_total_usd   DOUBLE,
    new_total_usd   DOUBLE,
    pct_change      DOUBLE,
    detail          VARCHAR,
    computed_at     TIMESTAMP NOT NULL
);
