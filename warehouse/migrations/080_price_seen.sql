-- The price-history floor (migration 070) without a scan of every offer at each load (issue 16):
-- the cheapest plausible price per GPU-hour ever loaded per GPU model is kept in a table, updated
-- by the one insert both loaders share (load_insert_offers.sql), instead of being aggregated from
-- the whole of `offers` by the view gpu_price_references at every load (0.15 s a load at 7.3M
-- offers, nine loads a refresh: what made a refresh on a year of history 1.18x one on an empty
-- warehouse).
--
-- Exact, not an estimate: offers are only ever appended (warehouse/loading.py), so a running
-- minimum and count over the appended rows equal the aggregate over the table. The same rows count
-- as before: a known GPU model, a price per GPU-hour, inside offer_price_problem()'s range.
-- tests/warehouse/test_price_references.py checks the table against that aggregate after crawls
-- and an import.
CREATE TABLE gpu_price_seen (
    gpu_model                  VARCHAR PRIMARY KEY,
    cheapest_usd_per_gpu_hour  DOUBLE NOT NULL,
    offers                     BIGINT NOT NULL   -- plausible, priced offers behind the minimum
);

-- The offers loaded before this migration.
INSERT INTO gpu_price_seen
SELECT gpu_model, min(price_usd_per_gpu_hour), count(*)
FROM offers
WHERE gpu_model IS NOT NULL
  AND price_usd_per_gpu_hour IS NOT NULL
  AND offer_price_problem(price_usd_per_gpu_hour) IS NULL
GROUP BY gpu_model;

-- The same view (columns and rule as migration 070), now over the maintained table.
CREATE OR REPLACE VIEW gpu_price_references AS
WITH per_tflop AS (
    SELECT min(s.cheapest_usd_per_gpu_hour / g.bf16_dense_tflops) AS cheapest_usd_per_tflop_hour
    FROM gpu_price_seen AS s
    JOIN gpus AS g USING (gpu_model)
    WHERE g.bf16_dense_tflops > 0
)
SELECT
    s.gpu_model,
    s.cheapest_usd_per_gpu_hour AS reference_usd_per_gpu_hour,
    'history' AS reference_source,
    s.offers AS reference_offers
FROM gpu_price_seen AS s
UNION ALL
SELECT
    g.gpu_model,
    g.bf16_dense_tflops * t.cheapest_usd_per_tflop_hour AS reference_usd_per_gpu_hour,
    'catalog' AS reference_source,
    0 AS reference_offers
FROM gpus AS g, per_tflop AS t
WHERE g.bf16_dense_tflops > 0
  AND t.cheapest_usd_per_tflop_hour IS NOT NULL
  AND g.gpu_model NOT IN (SELECT gpu_model FROM gpu_price_seen);
