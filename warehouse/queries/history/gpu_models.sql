-- The canonical GPU model names a GPU name given to `gpuplan history` resolves against: the GPU
-- catalog (gpus) and the models priced by runs of day $since or later (one the gpus table does not
-- list yet). Bounded by run_day, the offers scan reads the recent row groups only, so its cost does
-- not grow with the length of the history.
SELECT gpu_model
FROM gpus
UNION
SELECT gpu_model
FROM offers
WHERE run_day >= $since
  AND gpu_model IS NOT NULL
  AND price_usd_per_gpu_hour IS NOT NULL
ORDER BY gpu_model
