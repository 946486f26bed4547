-- The lines of a feed that are not JSON objects with offer fields (a truncated last line, a
-- stray array...), verbatim, into rejected_offers. Run only when load_staged found such lines:
-- it reads the feed again as plain text lines (a control character as the column delimiter,
-- so a line never splits) and checks them with the same JSON parser, fields (offer_fields) and
-- test (no field set) as feed_records. Lines that are not even UTF-8 text go to the temp table
-- load_unreadable_lines (DuckDB's rejects table), which load/unreadable_lines.sql adds.
INSERT INTO rejected_offers (crawl_id, platform, raw, reason, rejected_at)
WITH lines AS (
    SELECT line, try(json_transform(line, to_json(offer_fields()))) AS item
    FROM read_csv(
        $feed,
        columns = {'line': 'VARCHAR'},
        delim = $delimiter, quote = '', escape = '', header = false,
        auto_detect = false, strict_mode = false,
        max_line_size = 16777216,  -- 16 MB: far past any offer line, bounded buffers
        ignore_errors = true, store_rejects = true,
        rejects_table = 'load_unreadable_lines', rejects_scan = 'load_unreadable_scans'
    )
    WHERE trim(line) <> ''
)
SELECT
    $crawl_id,
    $platform,
    line,
    CASE
        WHEN NOT json_valid(line) THEN 'malformed JSON'
        WHEN json_type(line) <> 'OBJECT' THEN 'not a JSON object'
        ELSE 'no offer fields'
    END,
    $rejected_at
FROM lines
WHERE item IS NULL OR item IS NOT DISTINCT FROM offer_record()
