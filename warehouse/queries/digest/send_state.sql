-- The send record of one digest day, if any.
SELECT status, attempts, message_id
FROM digest_sends
WHERE digest_date = $digest_date
