-- The carry rule, in one home: what stands for a platform when its crawl does not stand whole.
-- A crawl of ours stands (crawl_stands_for):
--   'all'           ok, with offers loaded: its offers stand for the platform;
--   'what_it_read'  partial, with offers loaded: its offers stand, and for the rest the platform's
--                   last good crawl is carried, stale: each of its offers whose address (offers.
--                   source_url) the partial crawl did not read whole (crawl_runs.read_sources, NULL:
--                   not said, so none) and that the partial crawl does not offer again (offer_id and
--                   pricing_type, the key of an offer within a crawl);
--   'nothing'       failed, skipped or no offers loaded: the last good crawl is carried whole, stale.
-- A platform that a plan day's run did not crawl at all, while it crawled others, has its last good
-- crawl carried whole, stale (queries/plans/record_crawls.sql, status 'not_crawled').
-- The last good crawl (crawl_carries) is the platform's usable crawl of ours (usable_runs) nearest in
-- time to the attempt, an earlier one first on a tie: a crawl dated after the attempt counts (it was
-- recorded by a clock since stepped back). It is carried while carry_hours, the hours between the
-- two, is at most GPUPLAN_STALE_HOURS; the caller holds the bound: record_crawls when it records a
-- plan day (plan_carried_crawls), judged_offers(max_stale_hours) for the latest crawls.
-- Every age the rule judges is from when a crawl's prices are (priced_at_of: its crawl, or its
-- catalog's own date when older): a carried crawl's carry_hours run from its priced_at, and a crawl
-- that stands itself but read a catalog dated more than GPUPLAN_STALE_HOURS before it crawled
-- (carry_hours(crawled_at, priced_at)) stands nowhere, as a carried crawl past the bound: for the
-- latest crawls latest_runs.stale_hours says it (judged_offers' max_stale_hours holds the bound),
-- for a plan day record_crawls records it (plan_crawls.dated_out).
-- A last good crawl that was partial itself brings its own carried crawl with it (carry_chain), and
-- so on back, each within the bound. Each carried crawl's row names the partial crawls above it in
-- `read_by` (day_runs, latest_runs); standing_offers() leaves out what any of them read.
CREATE OR REPLACE MACRO crawl_stands_for(status, offers_loaded) AS
    CASE
        WHEN status = 'ok' AND offers_loaded > 0 THEN 'all'
        WHEN status = 'partial' AND offers_loaded > 0 THEN 'what_it_read'
        ELSE 'nothing'
    END;

CREATE OR REPLACE MACRO carry_hours(attempted_at, last_good_at) AS
    abs(epoch(attempted_at) - epoch(last_good_at)) / 3600;

-- Per crawl attempt of ours that does not stand for all: its platform's last good crawl.
--   partial             TRUE: the attempt stands for what it read (the carried crawl fills the rest)
--   last_good_crawl_id, last_good_at   that crawl and when it crawled (usable_runs.crawled_at)
--   carry_hours         hours between the attempt and its prices (priced_at), either way
CREATE OR REPLACE VIEW crawl_carries AS
WITH attempts AS (
    SELECT
        crawl_id,
        platform,
        crawl_stands_for(status, offers_loaded) = 'what_it_read' AS partial,
        crawled_at_of(finished_at, started_at, loaded_at) AS attempted_at
    FROM crawl_runs
    WHERE source = 'crawl' AND crawl_stands_for(status, offers_loaded) <> 'all'
)
SELECT
    a.crawl_id,
    a.platform,
    a.partial,
    a.attempted_at,
    u.crawl_id AS last_good_crawl_id,
    u.crawled_at AS last_good_at,
    carry_hours(a.attempted_at, u.priced_at) AS carry_hours
FROM attempts AS a
JOIN usable_runs AS u ON u.platform = a.platform AND u.source = 'crawl' AND u.crawl_id <> a.crawl_id
QUALIFY row_number() OVER (
    PARTITION BY a.crawl_id
    ORDER BY carry_hours(a.attempted_at, u.crawled_at), u.crawled_at <= a.attempted_at DESC, u.loaded_at DESC, u.crawl_id
) = 1;

-- Per usable crawl of ours (head): the crawls that stand when it is carried. Itself; and when it is
-- partial, the usable crawl before it (by crawled_at), less what it read; and so on while the
-- crawl reached is partial, at most 32 deep (a month of daily partial crawls).
--   head        the crawl carried first
--   crawl_id    a crawl standing with it; crawled_at when it crawled, priced_at when its prices are from
--   read_by     the partial crawls between head and it, head included (empty for head itself)
CREATE OR REPLACE VIEW carry_chain AS
WITH RECURSIVE previous_good AS (
    SELECT
        crawl_id,
        crawled_at,
        priced_at,
        crawl_stands_for(status, offers_loaded) = 'what_it_read' AS partial,
        lag(crawl_id) OVER (PARTITION BY platform ORDER BY crawled_at, loaded_at, crawl_id) AS previous_crawl_id
    FROM usable_runs
    WHERE source = 'crawl'
),
chain(head, crawl_id, read_by, depth) AS (
    SELECT crawl_id, crawl_id, CAST([] AS VARCHAR[]), 1 FROM previous_good
    UNION ALL
    SELECT c.head, p.previous_crawl_id, list_append(c.read_by, c.crawl_id), c.depth + 1
    FROM chain AS c
    JOIN previous_good AS p ON p.crawl_id = c.crawl_id
    WHERE p.partial AND p.previous_crawl_id IS NOT NULL AND c.depth < 32
)
SELECT c.head, c.crawl_id, g.crawled_at, g.priced_at, c.read_by
FROM chain AS c
JOIN previous_good AS g USING (crawl_id);

-- The offers that stand for the runs in the relation named `runs` (day_runs, latest_runs, or a
-- CTE of their rows: crawl_id, platform, run_day, read_by (VARCHAR[]), and any other columns, which
-- are passed on): every offer of each run, less what any partial crawl in its read_by read (an
-- address among its read_sources, or an offer it holds again: offer_id and pricing_type). Returns
-- the offer's columns, then the run's other than crawl_id, platform, run_day.
CREATE OR REPLACE MACRO standing_offers(runs) AS TABLE
WITH stood AS MATERIALIZED (
    SELECT * FROM query_table(runs)
),
partials AS MATERIALIZED (
    SELECT r.crawl_id, r.platform, run_day_of(r.started_at, r.loaded_at) AS run_day, r.read_sources
    FROM crawl_runs AS r
    WHERE r.crawl_id IN (SELECT unnest(read_by) FROM stood)
),
read_again AS MATERIALIZED (
    SELECT o.crawl_id, o.offer_id, o.pricing_type
    FROM offers AS o
    JOIN partials AS p ON o.crawl_id = p.crawl_id AND o.platform = p.platform AND o.run_day = p.run_day
    -- offers are stored in load order: the days bound the scan (crawl_id, a hash, prunes nothing)
    WHERE o.run_day BETWEEN (SELECT min(run_day) FROM partials) AND (SELECT max(run_day) FROM partials)
)
SELECT o.*, s.* EXCLUDE (crawl_id, platform, run_day)
FROM offers AS o
JOIN stood AS s ON s.crawl_id = o.crawl_id AND s.platform = o.platform AND o.run_day = s.run_day
WHERE o.run_day BETWEEN (SELECT min(run_day) FROM stood) AND (SELECT max(run_day) FROM stood)
  AND (
      coalesce(len(s.read_by), 0) = 0
      OR (
          NOT EXISTS (
              SELECT 1 FROM partials AS p
              WHERE list_contains(s.read_by, p.crawl_id) AND list_contains(p.read_sources, o.source_url)
          )
          AND NOT EXISTS (
              SELECT 1 FROM read_again AS x
              WHERE list_contains(s.read_by, x.crawl_id) AND x.offer_id = o.offer_id
                AND x.pricing_type = o.pricing_type
          )
      )
  );
