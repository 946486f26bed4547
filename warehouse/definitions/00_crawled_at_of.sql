-- When a run crawled: its own time (finished, else started), capped by loaded_at (a crawl cannot
-- have finished after it was loaded: the loader's clock, which a crawl's own summary cannot move,
-- bounds a crawling host's clock that was ahead). usable_runs.crawled_at, the age of a carried
-- crawl (queries/plans/record_crawls.sql) and of a platform's latest attempt (latest_runs) call it.
CREATE OR REPLACE MACRO crawled_at_of(finished_at, started_at, loaded_at) AS
    least(coalesce(finished_at, started_at, loaded_at), loaded_at);

-- When a crawl's prices are from: when it crawled (crawled_at), or, when what it read names its own
-- date (crawl_runs.catalog_date: a catalog file's last commit, a day), the end of that day if earlier
-- (a file committed that day was read no later than then). The carry rule (15_crawl_carries.sql)
-- judges every age against GPUPLAN_STALE_HOURS from it: a catalog years old is an old crawl.
CREATE OR REPLACE MACRO priced_at_of(crawled_at, catalog_date) AS
    least(crawled_at, CAST(catalog_date AS TIMESTAMP) + INTERVAL 1 DAY);
