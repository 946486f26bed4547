-- The commonest kinds of rejection among one load's staged records (temp table load_rejected), for the
-- crawl's error: the reason without the record's own values (up to a colon or ", got": "absurd
-- price", "missing required field", "price_amount must be > 0"), most frequent first, at most
-- $shown kinds.
SELECT regexp_replace(reason, '(:|, got ).*$', '') AS kind, count(*) AS records
FROM load_rejected
GROUP BY kind
ORDER BY records DESC, kind
LIMIT $shown
