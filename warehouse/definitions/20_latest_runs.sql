-- Per platform, what stands for it now: its latest crawl of ours (history imports are history, not
-- what is on offer now), and the last good crawl the carry rule (15_crawl_carries.sql) carries for
-- it, stale. "Latest" is the crawl's own time (crawled_at_of), so loading an old crawl file later
-- does not replace a newer one. A run dated ahead of now by more than clock_skew_tolerance() (the
-- crawling host's clock was ahead as it loaded too) is not the latest until then; its offers stay in
-- `offers` and in the history of their run day, and it may still be carried for a later attempt.
-- The latest attempt stands when it worked; when it did not stand for all (failed, skipped, empty,
-- partial) its last good crawl stands too, stale, for what the attempt did not read (read_by), so
-- an outage never reads as "sold out". For what reads the latest crawls (`gpuplan gpus`, ad-hoc job
-- plans, latest_offers):
--   stale        TRUE: carried because the platform's latest crawl attempt did not stand for all
--   stale_hours  the age of its prices by the carry rule: carry_hours between that attempt and this
--                crawl's priced_at, or for the latest crawl itself between its crawl and its
--                priced_at (0 unless it read a catalog dated earlier); past GPUPLAN_STALE_HOURS its
--                offers drop out (judged_offers' max_stale_hours)
--   read_by      the partial crawls above a carried one (the latest attempt, partial carried
--                crawls): what any of them read is left out of it (standing_offers)
CREATE OR REPLACE VIEW latest_runs AS
WITH latest_attempts AS (
    SELECT crawl_id, platform, crawled_at_of(finished_at, started_at, loaded_at) AS attempted_at
    FROM crawl_runs
    WHERE source = 'crawl'
      AND NOT coalesce(offline, FALSE)
      AND crawled_at_of(finished_at, started_at, loaded_at)
          <= CAST(now() AT TIME ZONE 'UTC' AS TIMESTAMP) + clock_skew_tolerance()
    QUALIFY row_number() OVER (PARTITION BY platform ORDER BY attempted_at DESC, loaded_at DESC, crawl_id) = 1
),
latest AS (
    SELECT platform, crawl_id
    FROM usable_runs
    WHERE source = 'crawl'
      AND crawled_at <= CAST(now() AT TIME ZONE 'UTC' AS TIMESTAMP) + clock_skew_tolerance()
    QUALIFY row_number() OVER (PARTITION BY platform ORDER BY crawled_at DESC, loaded_at DESC, crawl_id) = 1
),
standing AS (
    -- the latest crawl, when it is the latest attempt too (or the platform was never crawled live)
    SELECT l.crawl_id, FALSE AS stale, 0.0 AS stale_hours, CAST([] AS VARCHAR[]) AS read_by
    FROM latest AS l
    LEFT JOIN latest_attempts AS a USING (platform)
    WHERE a.crawl_id IS NULL OR a.crawl_id = l.crawl_id
    UNION ALL
    -- the last good crawl carried for a latest attempt that does not stand for all, and what it
    -- brings (carry_chain)
    SELECT
        ch.crawl_id,
        TRUE AS stale,
        carry_hours(c.attempted_at, ch.priced_at) AS stale_hours,
        CASE WHEN c.partial THEN list_prepend(c.crawl_id, ch.read_by) ELSE ch.read_by END AS read_by
    FROM latest_attempts AS a
    JOIN crawl_carries AS c USING (crawl_id)
    JOIN carry_chain AS ch ON ch.head = c.last_good_crawl_id AND ch.crawl_id <> c.crawl_id
)
SELECT
    u.platform,
    u.crawl_id,
    u.status,
    u.run_day,
    u.crawled_at,
    u.offline,
    s.stale,
    CASE WHEN s.stale THEN s.stale_hours ELSE carry_hours(u.crawled_at, u.priced_at) END AS stale_hours,
    s.read_by
FROM standing AS s
JOIN usable_runs AS u USING (crawl_id);
