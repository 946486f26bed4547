-- A partial crawl stands only for what it read: for the rest, the platform's last good crawl is
-- carried, stale (definitions/15_crawl_carries.sql). What it read is the list of platform addresses
-- whose answers its spider read whole (the crawl summary's stats.read_sources, scrapers/coverage.py);
-- an offer was read there when its source_url is one of them.
--   read_sources  NULL when the summary does not say (a summary written before it was recorded, an
--                 import): then a partial crawl is taken to have read only the offers it holds
ALTER TABLE crawl_runs ADD COLUMN read_sources VARCHAR[];

-- The crawls carried into a plan day, one row each, as queries/plans/record_carried_crawls.sql
-- decided when the day's crawls were recorded (the carry rule, within GPUPLAN_STALE_HOURS): the
-- platform's last good crawl, and the crawls a partial one brings with it (carry_chain).
--   read_by      the partial crawls above it (the day's own, partial carried crawls): what any of
--                them read is left out of it
--   carry_hours  how far it is from the day's attempt (its stale age)
CREATE TABLE plan_carried_crawls (
    plan_date    DATE NOT NULL,
    platform     VARCHAR NOT NULL,
    crawl_id     VARCHAR NOT NULL,
    read_by      VARCHAR[] NOT NULL,
    carry_hours  DOUBLE NOT NULL,
    PRIMARY KEY (plan_date, platform, crawl_id)
);
-- Days recorded before: their carried last good crawl, whole (only failed crawls carried then).
INSERT INTO plan_carried_crawls
SELECT
    p.plan_date,
    p.platform,
    p.last_good_crawl_id,
    [],
    abs(
        epoch(least(coalesce(r.finished_at, r.started_at, r.loaded_at), r.loaded_at))
        - epoch(least(coalesce(g.finished_at, g.started_at, g.loaded_at), g.loaded_at))
    ) / 3600
FROM plan_crawls AS p
JOIN crawl_runs AS r ON r.crawl_id = p.crawl_id
JOIN crawl_runs AS g ON g.crawl_id = p.last_good_crawl_id
WHERE p.carried;
