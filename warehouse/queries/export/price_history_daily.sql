-- The open dataset's price history of one day: the price_history_daily view's rows of that day,
-- through its macro, which reads only that day's offers.
SELECT *
FROM price_history_between($day, $day)
ORDER BY gpu_model
