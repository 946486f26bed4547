-- Record what one cycle read of a watch: whether it holds, its edges so far, when it last fired.
INSERT INTO watch_states (watch_key, holding, fires, checked_at, fired_at)
VALUES ($watch_key, $holding, $fires, $checked_at, $fired_at)
ON CONFLICT (watch_key) DO UPDATE SET
    holding = excluded.holding,
    fires = excluded.fires,
    checked_at = excluded.checked_at,
    fired_at = excluded.fired_at
