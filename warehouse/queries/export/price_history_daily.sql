-- The open dataset's price history of one day: the price_history_daily view's rows of that day.
SELECT *
FROM price_history_daily
WHERE observed_date = $day
ORDER BY gpu_model
