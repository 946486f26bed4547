-- Stage the quotes a spider rejected (its `<platform>.rejected.jsonl`, one scrapers.rejects
-- RejectedOffer per line, named by the summary's stats.rejected_feed) in the temp table
-- load_scraper_rejects: each line verbatim, and the reason to record: the spider's reason code,
-- then its detail (a quote file's line-numbered problems, else the file and line the quote is on).
-- Read as plain text lines (a control character as the column delimiter, so a line never splits),
-- so a line that is not such a record is kept too, with a reason saying so. The loader runs this
-- before its transaction: a file DuckDB cannot read fails here and aborts nothing.
CREATE OR REPLACE TEMP TABLE load_scraper_rejects AS
WITH lines AS (
    SELECT
        line,
        try(json_transform(line, '{
            "reason": "VARCHAR",
            "raw": {"file": "VARCHAR", "line": "VARCHAR", "problems": ["VARCHAR"]}
        }')) AS record
    FROM read_csv(
        $feed,
        columns = {'line': 'VARCHAR'},
        delim = $delimiter, quote = '', escape = '', header = false,
        auto_detect = false, strict_mode = false,
        max_line_size = 16777216  -- 16 MB, as load/unparsed_lines.sql
    )
    WHERE trim(line) <> ''
)
SELECT
    line,
    CASE
        WHEN nullif(record.reason, '') IS NULL
            THEN 'in the spider''s rejected feed but not a rejected-quote record'
        ELSE record.reason || coalesce(
            ': ' || nullif(array_to_string(record.raw.problems, '; '), ''),
            ': ' || record.raw.file || ' line ' || record.raw.line,
            ''
        )
    END AS reason
FROM lines
