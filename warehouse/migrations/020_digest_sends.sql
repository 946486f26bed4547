-- One row per digest day: the record that makes the daily mail go out once and never get lost.
-- 'sending' is written before the SMTP conversation starts, so a crash mid-send leaves a row
-- the next run retries (at least once, never lost); 'failed' rows are retried too.
-- Timestamps are UTC. No secret ever lands here: last_error is scrubbed of the SMTP password.

CREATE TABLE digest_sends (
    digest_date         DATE PRIMARY KEY,   -- the plan date the digest reports
    status              VARCHAR NOT NULL CHECK (status IN ('sending', 'sent', 'failed', 'skipped')),
    attempts            INTEGER NOT NULL,   -- SMTP attempts so far, this one included
    last_error          VARCHAR,            -- exception type and message of the last failed attempt
    first_attempt_at    TIMESTAMP NOT NULL,
    last_attempt_at     TIMESTAMP NOT NULL,
    sent_at             TIMESTAMP,          -- when the server accepted the message
    message_id          VARCHAR NOT NULL,   -- kept across retries so mail clients can drop a duplicate
    subject             VARCHAR,
    recipients          VARCHAR[] NOT NULL, -- accepted by the server (sent) or addressed (otherwise)
    refused_recipients  VARCHAR[] NOT NULL  -- 'address: code reply' for each recipient the server refused
);
