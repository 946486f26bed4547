-- For each platform asked about ($platforms) that has ever loaded offers: when its last crawl that
-- loaded offers finished, and whether that is older than $max_age_hours before $now (UTC), or
-- dated ahead of $now (a host clock ahead: such a crawl proves nothing about now).
-- A crawl's time is capped by when it was loaded, as usable_runs does. A platform that never worked
-- (or is skipped for want of a token) has no data to go stale; its crawl's volume check says why.
WITH last_good AS (
    SELECT platform, max(least(coalesce(finished_at, started_at, loaded_at), loaded_at)) AS last_crawled_at
    FROM crawl_runs
    WHERE source = 'crawl'
      AND run_worked(status)
      AND offers_loaded > 0
    GROUP BY platform
)
SELECT
    g.platform,
    g.last_crawled_at,
    date_diff('minute', g.last_crawled_at, CAST($now AS TIMESTAMP)) / 60.0 AS age_hours,
    g.last_crawled_at > CAST($now AS TIMESTAMP) + clock_skew_tolerance() AS dated_ahead,
    g.last_crawled_at < CAST($now AS TIMESTAMP) - to_hours(CAST($max_age_hours AS INTEGER))
        OR g.last_crawled_at > CAST($now AS TIMESTAMP) + clock_skew_tolerance() AS stale
FROM unnest($platforms) AS p(platform)
JOIN last_good AS g USING (platform)
ORDER BY g.platform
