-- When a run crawled: its own time (finished, else started), capped by loaded_at (a crawl cannot
-- have finished after it was loaded: the loader's clock, which a crawl's own summary cannot move,
-- bounds a crawling host's clock that was ahead). usable_runs.crawled_at, the age of a carried
-- crawl (queries/plans/record_crawls.sql) and of a platform's latest attempt (latest_runs) call it.
CREATE OR REPLACE MACRO crawled_at_of(finished_at, started_at, loaded_at) AS
    least(coalesce(finished_at, started_at, loaded_at), loaded_at);
