-- The GPU catalog (sizing.catalog.GpuSpec) also says how many GPUs one node holds, which
-- bounds single-node plans. NULL = the catalog does not say.
ALTER TABLE gpus ADD COLUMN gpus_per_node INTEGER;
