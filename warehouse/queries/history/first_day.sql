-- The first day the warehouse holds: the earliest day planned (plan_crawls, by plan day) or with a
-- usable run (crawled or imported, any platform). One row; NULL on an empty warehouse.
SELECT least((SELECT min(plan_date) FROM plan_crawls), (SELECT min(day) FROM daily_runs)) AS first_day
