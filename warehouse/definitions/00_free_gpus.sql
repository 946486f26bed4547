-- How stock is counted: every stock figure (the stock watch, the digest's stock section,
-- price_history_daily.gpus_available, `gpuplan gpus`) sums this, so no GPU counts twice.
--
-- Offers are not machines. A marketplace lists one machine several times: Vast lists an 8-GPU
-- machine whole, as a 4-GPU slice and as 2-GPU slices (one `machine_id`, overlapping `gpu_ids`),
-- and each of them on demand and at a spot bid. Summing the offers' available_gpus counts its free
-- GPUs up to eight times. Nor are offers separate stock: RunPod reports one stock per GPU type and
-- cloud and lists it as 1x, 2x, 4x and 8x pods, each "in stock" meaning at least one pod of its size
-- (available_gpus = the size, a lower bound); summing them counts 15 where at least 8 are free. So
-- offers are counted per unit of stock, the first of:
--   * a pool (same platform and pool_id): sizes, tiers or regions the platform lists off one count;
--   * a machine (same platform and machine_id): offers sharing it share its GPUs;
--   * a listing (same platform and offer_id): one listing under several terms (an on-demand offer
--     and its spot twin, PlatformSpider.on_demand_and_spot);
-- and a unit has the union of the gpu_ids of its offers that are wholly free (available_gpus >=
-- their ids), or, where ids are not said, as many as its largest listing, whichever is more (each
-- listing is a lower bound, so the largest is what is known free);
--   * a fractional offer (gpu_frac: a share of one card) is no card: never counted;
--   * unknown stock (available_gpus NULL on every offer of a unit) stays unknown (NULL), never 0.
-- Offers stay offers: a plan can still rent a slice or a smaller pod (plan_shapes); only the counting
-- is per unit. The figure depends only on the set of offers, never on the order they were loaded.
--
-- `offers` names a table or CTE with the columns scope (whatever the caller counts per, e.g. a day;
-- NULL is a scope too), platform, gpu_model, offer_id, machine_id, pool_id, gpu_ids, gpu_frac and
-- available_gpus. One row per (scope, platform, gpu_model, unit): `machine` (the unit, e.g.
-- 'pool NVIDIA GeForce RTX 4090/secure'), free_gpus, offers (how many whole-card offers it had).
CREATE OR REPLACE MACRO free_gpus(offers) AS TABLE
WITH cards AS (
    SELECT
        scope,
        platform,
        gpu_model,
        CASE
            WHEN pool_id IS NOT NULL THEN 'pool ' || pool_id
            WHEN machine_id IS NOT NULL THEN 'machine ' || machine_id
            ELSE 'offer ' || offer_id
        END AS machine,
        available_gpus,
        CASE WHEN len(gpu_ids) > 0 AND available_gpus >= len(gpu_ids) THEN gpu_ids END AS free_ids
    FROM query_table(offers)
    WHERE gpu_frac IS NULL
)
SELECT
    scope,
    platform,
    gpu_model,
    machine,
    CASE
        WHEN count(available_gpus) > 0 THEN CAST(greatest(
            max(available_gpus),
            coalesce(len(list_distinct(flatten(list(free_ids) FILTER (free_ids IS NOT NULL)))), 0)
        ) AS BIGINT)
    END AS free_gpus,
    count(*) AS offers
FROM cards
GROUP BY ALL;
