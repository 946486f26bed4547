-- Whether a crawl's own time ($at, from its summary) is later than when it is loaded ($loaded_at)
-- by more than clock_skew_tolerance(): the crawling host's clock was ahead.
SELECT CAST($at AS TIMESTAMP) > CAST($loaded_at AS TIMESTAMP) + clock_skew_tolerance()
