-- Every push recorded for these channels: what was sent (never again) and what failed (to retry).
SELECT channel, event_key, event_kind, event_date, message, status, attempts
FROM push_sends
WHERE list_contains(CAST($channels AS VARCHAR[]), channel)
ORDER BY event_date, first_attempt_at
