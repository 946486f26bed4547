-- A crawl that read a catalog naming its own date (offers.catalog_date: a SkyPilot catalog file's
-- last commit) has prices only as new as that catalog: the carry rule (definitions/15_crawl_carries.sql)
-- judges their age by it, as it judges an old crawl's.
--   crawl_runs.catalog_date  the oldest catalog date its offers name (NULL: none names one), set when
--                            the crawl is loaded (queries/load/record_crawl.sql)
--   plan_crawls.dated_out    TRUE: the crawl recorded for the plan day worked, but its prices (its
--                            catalog's date) were older than GPUPLAN_STALE_HOURS when it crawled:
--                            its offers stand nowhere in the day's plans, as an old crawl's past the
--                            bound (queries/plans/record_crawls.sql decides)
ALTER TABLE crawl_runs ADD COLUMN catalog_date DATE;
UPDATE crawl_runs
SET catalog_date = dated.catalog_date
FROM (
    SELECT crawl_id, min(catalog_date) AS catalog_date
    FROM offers
    WHERE catalog_date IS NOT NULL
    GROUP BY crawl_id
) AS dated
WHERE crawl_runs.crawl_id = dated.crawl_id;
ALTER TABLE plan_crawls ADD COLUMN dated_out BOOLEAN DEFAULT FALSE;
