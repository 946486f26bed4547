-- The history floor: a price far below anything ever seen for its GPU is a mistake, not a bargain.
-- One rule for every offer, crawled, quoted or imported, applied by both loaders in
-- queries/load/price_staged.sql after the plausible range (00_price_plausibility.sql). One of the
-- price-plausibility rules listed in docs/plausibility.md.
--
-- Why: the day's price floor (00_price_floor.sql, judged_offers) compares an offer with the other
-- platforms selling the same GPU that day, so it cannot judge a lone quote: one "2.1万" read as
-- 2.1 CNY, or a monthly price filed as hourly, became 20 of a day's 24 cheapest plans. History
-- can: GPU rental prices fall by tens of percent a year, not to a tenth overnight.
--
-- The reference for an offer's GPU model is the cheapest plausible price per GPU-hour ever loaded
-- for it, all platforms, pricing types (spot included) and sources (table gpu_price_seen, kept by the
-- one insert both loaders share, queries/load/insert_offers.sql). For a model never priced before,
-- the catalog stands in: the cheapest price ever seen per dense BF16 TFLOP (gpus table) times the
-- model's TFLOPs, since nobody rents compute for a tenth of the cheapest compute on record. With no
-- history at all, nothing is judged. An offer under history_price_share() of its reference is
-- rejected (kept in rejected_offers with the reason), as an absurd price is.
CREATE OR REPLACE MACRO history_price_share() AS CAST(0.1 AS DOUBLE);

-- Per GPU model: the reference price (USD per GPU-hour), where it comes from ('history' or
-- 'catalog'), and how many offers stand behind the history figure.
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

-- Why a priced offer is implausibly cheap against its GPU's reference, or NULL when it is not (or
-- there is no reference).
CREATE OR REPLACE MACRO history_price_problem(price_usd_per_gpu_hour, reference_usd_per_gpu_hour, reference_source) AS
    CASE
        WHEN price_usd_per_gpu_hour < reference_usd_per_gpu_hour * history_price_share()
            THEN printf(
                'implausible price: %g USD per GPU-hour is under %g%% of the cheapest %s (%g USD per GPU-hour)',
                round(price_usd_per_gpu_hour, 4),
                history_price_share() * 100,
                CASE reference_source
                    WHEN 'history' THEN 'price ever seen for this GPU'
                    ELSE 'compute ever seen, scaled to this GPU''s TFLOPs'
                END,
                round(reference_usd_per_gpu_hour, 4))
    END;
