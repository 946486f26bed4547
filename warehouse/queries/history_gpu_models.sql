-- The canonical GPU models that have priced offers, with how many offers and the last day seen.
SELECT gpu_model, count(*) AS offers, max(observed_date) AS last_day
FROM offers
WHERE gpu_model IS NOT NULL
  AND price_usd_per_gpu_hour IS NOT NULL
GROUP BY gpu_model
ORDER BY gpu_model
