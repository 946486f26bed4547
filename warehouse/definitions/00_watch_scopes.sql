-- The card watches a digest query reads (queries/digest/watch_prices.sql, watch_stock.sql), from
-- the parallel lists digest.watches passes: one row per watch, its number, the canonical GPU model
-- it watches and its platforms ([]: every platform).
CREATE OR REPLACE MACRO watch_scopes(watch_nos, gpu_models, platforms) AS TABLE
SELECT
    unnest(CAST(watch_nos AS INTEGER[])) AS watch_no,
    unnest(CAST(gpu_models AS VARCHAR[])) AS gpu_model,
    unnest(CAST(platforms AS VARCHAR[][])) AS platforms;
