-- Make the gpus table equal to the catalog frame `gpu_catalog` (sizing.catalog.GpuSpec fields):
-- the table is a mirror of sizing/data/gpus.csv, so rows the catalog no longer has go too.
DELETE FROM gpus;
INSERT INTO gpus (
    gpu_model, family, form, memory_gb, bf16_dense_tflops, memory_bandwidth_gb_per_s,
    interconnect, interconnect_gb_per_s, gpus_per_node, verified, source
)
SELECT
    gpu_model, family, form, memory_gb, bf16_dense_tflops, memory_bandwidth_gb_per_s,
    interconnect, interconnect_gb_per_s, gpus_per_node, verified, source
FROM gpu_catalog;
