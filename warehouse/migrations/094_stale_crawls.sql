-- A failed crawl does not rewrite the day's plans (issue 27, item 2). When a platform's crawl for a
-- plan day did not work, its last good crawl stands in for it while that crawl is at most
-- GPUPLAN_STALE_HOURS older than the failed one (queries/plans/record_crawls.sql decides, when the
-- day's crawls are recorded); its offers are then "carried": their price as of their crawl, their
-- stock unknown (definitions/30_day_runs.sql, 40_judged_offers.sql). The failure itself stays in
-- plan_crawls (crawl_id, status), so it is still listed as a failure.
--   last_good_crawl_id  the platform's last good crawl before the failed one (NULL: none, or the
--                       crawl worked); past the bound too, so the digest can say how old it is
--   carried             TRUE: that crawl's offers stand in the day's plans
ALTER TABLE plan_crawls ADD COLUMN last_good_crawl_id VARCHAR;
ALTER TABLE plan_crawls ADD COLUMN carried BOOLEAN NOT NULL DEFAULT FALSE;

-- Each plan says how old its offer's price is: crawled_at, the crawl's time (usable_runs.crawled_at),
-- and stale, TRUE when the offer was carried from an earlier crawl because the day's failed (its
-- stock then unknown). NULL in cheapest_plans and job_plans rows without a plan ('no_offer_fits',
-- 'no_plan'); rows planned before this migration say FALSE (nothing was carried then).
ALTER TABLE plan_candidates ADD COLUMN crawled_at TIMESTAMP;
ALTER TABLE plan_candidates ADD COLUMN stale BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE cheapest_plans ADD COLUMN crawled_at TIMESTAMP;
ALTER TABLE cheapest_plans ADD COLUMN stale BOOLEAN DEFAULT FALSE;
ALTER TABLE job_plans ADD COLUMN crawled_at TIMESTAMP;
ALTER TABLE job_plans ADD COLUMN stale BOOLEAN DEFAULT FALSE;
