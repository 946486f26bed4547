-- Record the state of a digest day's send (insert the first time, update after).
-- first_attempt_at and message_id stay as first written.
INSERT INTO digest_sends (
    digest_date, status, attempts, last_error, first_attempt_at, last_attempt_at, sent_at,
    message_id, subject, recipients, refused_recipients
)
VALUES (
    $digest_date, $status, $attempts, $last_error, $attempted_at, $attempted_at, $sent_at,
    $message_id, $subject, CAST($recipients AS VARCHAR[]), CAST($refused_recipients AS VARCHAR[])
)
ON CONFLICT (digest_date) DO UPDATE SET
    status = excluded.status,
    attempts = excluded.attempts,
    last_error = excluded.last_error,
    last_attempt_at = excluded.last_attempt_at,
    sent_at = excluded.sent_at,
    subject = excluded.subject,
    recipients = excluded.recipients,
    refused_recipients = excluded.refused_recipients
