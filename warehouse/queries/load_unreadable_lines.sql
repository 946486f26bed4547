-- The feed lines load_unparsed_lines could not read as text, from DuckDB's CSV rejects table
-- (load_unreadable_lines): bytes that are not UTF-8 show as '?' in the kept line.
INSERT INTO rejected_offers (crawl_id, platform, raw, reason, rejected_at)
SELECT
    $crawl_id,
    $platform,
    csv_line,
    CASE error_type WHEN 'INVALID ENCODING' THEN 'not UTF-8 text' ELSE 'unreadable line: ' || lower(error_type) END
        || ' (line ' || line || ' of the feed)',
    $rejected_at
FROM load_unreadable_lines
