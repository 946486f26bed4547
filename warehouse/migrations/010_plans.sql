-- Daily plans: the product. One row per (plan_date, model, method, ranking), always,
-- with status 'no_offer_fits' instead of a missing row.

CREATE TABLE cheapest_plans (
    plan_date                     DATE NOT NULL,
    model                         VARCHAR NOT NULL,  -- as asked ('7B', 'llama-3.1-70b')
    model_preset                  VARCHAR,           -- the shape the sizing model used
    method                        VARCHAR NOT NULL,  -- full | lora | qlora | ...
    ranking                       VARCHAR NOT NULL,  -- 'lowest_rent' | 'lowest_cost_per_btoken'
    status                        VARCHAR NOT NULL,  -- 'ok' | 'no_offer_fits'
    platform                      VARCHAR,
    offer_id                      VARCHAR,
    region                        VARCHAR,
    gpu_model                     VARCHAR,
    gpu_count                     INTEGER,           -- GPUs in the plan (units_rented x GPUs per offer)
    units_rented                  INTEGER,           -- how many of the offer's units
    nodes                         INTEGER,
    pricing_type                  VARCHAR,
    billing_period                VARCHAR,
    stock_known                   BOOLEAN,           -- FALSE: the platform does not say; flagged, not excluded
    available_gpus                INTEGER,
    zero_stage                    INTEGER,
    per_gpu_memory_gb             DOUBLE,
    rent_usd_per_hour             DOUBLE,
    rent_cny_per_hour             DOUBLE,
    rent_usd_per_month            DOUBLE,            -- 730 h
    rent_cny_per_month            DOUBLE,
    tokens_per_day                DOUBLE,
    cost_usd_per_billion_tokens   DOUBLE,
    cost_cny_per_billion_tokens   DOUBLE,
    computed_at                   TIMESTAMP NOT NULL,
    PRIMARY KEY (plan_date, model, method, ranking)
);

CREATE TABLE plan_changes (
    change_date          DATE NOT NULL,
    model                VARCHAR NOT NULL,
    method               VARCHAR NOT NULL,
    ranking              VARCHAR NOT NULL,
    change_type          VARCHAR NOT NULL,  -- new_platform | new_gpu | new_count | price_up | price_down | out_of_stock | now_fits | no_longer_fits
    old_value            VARCHAR,
    new_value            VARCHAR,
    old_rent_usd_per_month DOUBLE,
    new_rent_usd_per_month DOUBLE,
    pct_change           DOUBLE,
    detail               VARCHAR,
    computed_at          TIMESTAMP NOT NULL
);
