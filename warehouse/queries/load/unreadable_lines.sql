-- The feed lines load_unparsed_lines could not read as text because they are not UTF-8, from
-- DuckDB's CSV rejects table (load_unreadable_lines); the bad bytes show as '?' in the line.
-- Other CSV errors are left out: a line past max_line_size may be an offer read_json loaded,
-- and if it was not, the loader's count check says so in the crawl's error.
INSERT INTO rejected_offers (crawl_id, platform, raw, reason, rejected_at)
SELECT $crawl_id, $platform, csv_line, 'not UTF-8 text (line ' || line || ' of the feed)', $rejected_at
FROM load_unreadable_lines
WHERE error_type = 'INVALID ENCODING'
