-- A digest day's send record as a run reports it: status, attempts, the last error, when it was
-- last attempted and sent (UTC).
SELECT status, attempts, last_error, last_attempt_at, sent_at
FROM digest_sends
WHERE digest_date = $digest_date
