-- Whether the warehouse holds any day before $day: a day planned (plan_crawls, by plan day), or a
-- usable run (crawled or imported, any platform) of an earlier day, planned or not (history loaded
-- before the first refresh). One row, one boolean.
SELECT EXISTS (SELECT 1 FROM plan_crawls WHERE plan_date < $day)
    OR EXISTS (SELECT 1 FROM daily_runs WHERE day < $day) AS has_history
