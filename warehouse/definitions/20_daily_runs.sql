-- The run that stands for a platform on a day (its UTC run day), the basis of price trends and of
-- backfilled plans: our own crawl before an import (imported history, crawl_runs.source
-- 'import:<format>', shares `platform` with our crawls), live before offline (usable_runs), then
-- the latest.
CREATE OR REPLACE VIEW daily_runs AS
SELECT run_day AS day, platform, crawl_id, source, status, crawled_at
FROM usable_runs
QUALIFY row_number() OVER (
    PARTITION BY run_day, platform
    ORDER BY (source = 'crawl') DESC, started_at DESC NULLS LAST, loaded_at DESC, crawl_id
) = 1;
