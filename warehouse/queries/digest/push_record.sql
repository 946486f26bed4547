-- Record an event's push to one channel (insert the first time, update after); first_attempt_at stays.
INSERT INTO push_sends (
    channel, kind, event_key, event_kind, event_date, message, status, attempts, last_error,
    first_attempt_at, last_attempt_at, sent_at
)
VALUES (
    $channel, $kind, $event_key, $event_kind, $event_date, $message, $status, 1, $last_error,
    $attempted_at, $attempted_at, $sent_at
)
ON CONFLICT (channel, event_key) DO UPDATE SET
    status = excluded.status,
    attempts = push_sends.attempts + 1,
    last_error = excluded.last_error,
    last_attempt_at = excluded.last_attempt_at,
    sent_at = excluded.sent_at
