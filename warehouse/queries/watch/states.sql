-- Each intraday watch's state after its last cycle (watch_states).
SELECT watch_key, holding, fires, checked_at, fired_at
FROM watch_states
WHERE list_contains(CAST($watch_keys AS VARCHAR[]), watch_key)
