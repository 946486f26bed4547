-- Append one chunk of a history import read in Python (scrapers.history's readers) to import_rows:
-- its offers as a crawl feed holds them (JSONL, one OfferItem per line, written as the spiders' feeds
-- are) read by the crawl loader's own reader, feed_records; its refused rows from the registered frame
-- import_chunk_refused (platform, day, raw, reason). Params: $feed.
INSERT INTO import_rows BY NAME
SELECT
    CAST(platform AS VARCHAR) AS platform,
    CAST(day AS VARCHAR) AS day,
    CAST(raw AS VARCHAR) AS raw,
    coalesce(CAST(reason AS VARCHAR), 'refused by the reader') AS reason,
    md5_number(CAST(raw AS VARCHAR)) AS md5
FROM import_chunk_refused;

INSERT INTO import_rows BY NAME
SELECT
    item.platform AS platform,
    left(item.observed_at, 10) AS day,
    item,
    md5_number(to_json(item)) AS md5
FROM feed_records($feed, NULL, NULL, NULL)
