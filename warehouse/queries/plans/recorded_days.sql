-- Days in [$first, $last] with a crawl recorded in plan_crawls: the days that can have plans.
SELECT DISTINCT plan_date
FROM plan_crawls
WHERE plan_date BETWEEN $first AND $last
ORDER BY plan_date
