-- How stock is counted: every stock figure (the stock watch, the digest's stock section,
-- price_history_daily.gpus_available, `gpuplan gpus`) sums this, so no GPU counts twice.
--
-- Offers are not machines. A marketplace lists one machine several times: Vast lists an 8-GPU
-- machine whole, as a 4-GPU slice and as 2-GPU slices (one `machine_id`, overlapping `gpu_ids`),
-- and each of them on demand and at a spot bid. Summing the offers' available_gpus counts its free
-- GPUs up to eight times. So:
--   * offers sharing a machine (same platform and machine_id) share its GPUs: the machine has the
--     union of the gpu_ids of its offers that are wholly free (available_gpus >= their ids), or,
--     where ids are not said, as many as its largest free offer, whichever is more;
--   * offers without a machine_id are each their own machine, and a platform's offers with one
--     offer_id are one listing under several terms (an on-demand offer and its spot twin,
--     PlatformSpider.on_demand_and_spot): they share GPUs the same way;
--   * a fractional offer (gpu_frac: a share of one card) is no card: never counted;
--   * unknown stock (available_gpus NULL on every offer of a machine) stays unknown (NULL), never 0.
-- Offers stay offers: a plan can still rent a slice (plan_shapes); only the counting is per machine.
--
-- `offers` names a table or CTE with the columns scope (whatever the caller counts per, e.g. a day;
-- NULL is a scope too), platform, gpu_model, offer_id, machine_id, gpu_ids, gpu_frac and
-- available_gpus. One row per (scope, platform, gpu_model, machine): free_gpus, offers (how many of
-- the machine's whole-card offers there were).
CREATE OR REPLACE MACRO free_gpus(offers) AS TABLE
WITH cards AS (
    SELECT
        scope,
        platform,
        gpu_model,
        CASE WHEN machine_id IS NOT NULL THEN 'machine ' || machine_id ELSE 'offer ' || offer_id END AS machine,
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
