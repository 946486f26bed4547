-- Intraday watches (digest/intraday.py): one row per watch, what its last cycle saw. A watch fires
-- when it starts to hold (`holding` FALSE -> TRUE); it is re-armed only by a cycle that read it
-- not holding. `fires` counts its edges: the push event of edge N is 'watch:<watch_key>:<N>', so
-- each edge is one event in the push ledger (push_sends), sent once per channel.
CREATE TABLE watch_states (
    watch_key  VARCHAR PRIMARY KEY,
    holding    BOOLEAN NOT NULL,
    fires      INTEGER NOT NULL,
    checked_at TIMESTAMP NOT NULL,
    fired_at   TIMESTAMP
);
