-- Keep every rejected record of one crawl or one history import with the reason (temp table
-- load_rejected, load/price_staged.sql), under its run. `raw` is the
-- record's fields as read (text) when it failed validation, else the typed record's fields
-- (offer_field_names) as JSON; unparsed lines come verbatim from load_unparsed_lines.
INSERT INTO rejected_offers (crawl_id, platform, raw, reason, rejected_at)
SELECT
    crawl_id,
    platform,
    coalesce(raw, json_merge_patch('{}', to_json(struct_pack(
        *COLUMNS(lambda name: list_contains(offer_field_names(), name))
    )))),
    reason,
    $rejected_at
FROM load_rejected
