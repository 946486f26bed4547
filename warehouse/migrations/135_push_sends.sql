-- The push ledger (digest/push/delivery.py): one row per event and channel of GPUPLAN_NOTIFY. A
-- 'sent' event is never sent to that channel again; a 'failed' one is retried at the next run from
-- the message stored here (what was to be sent: no URL, token or secret is ever in it).
CREATE TABLE push_sends (
    channel          VARCHAR NOT NULL,
    kind             VARCHAR NOT NULL,
    event_key        VARCHAR NOT NULL,
    event_kind       VARCHAR NOT NULL,
    event_date       DATE NOT NULL,
    message          JSON NOT NULL,
    status           VARCHAR NOT NULL,
    attempts         INTEGER NOT NULL,
    last_error       VARCHAR,
    first_attempt_at TIMESTAMP NOT NULL,
    last_attempt_at  TIMESTAMP NOT NULL,
    sent_at          TIMESTAMP,
    PRIMARY KEY (channel, event_key),
    CHECK (status IN ('sent', 'failed'))
);
