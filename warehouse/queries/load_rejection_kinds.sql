-- The commonest kinds of rejection among one load's staged records (temp view load_priced), for the
-- crawl's error: the reason up to its first colon ("absurd price", "missing required field"),
-- most frequent first, at most $shown kinds.
SELECT split_part(reason, ':', 1) AS kind, count(*) AS records
FROM load_priced
WHERE reason IS NOT NULL AND NOT unparsed
GROUP BY kind
ORDER BY records DESC, kind
LIMIT $shown
