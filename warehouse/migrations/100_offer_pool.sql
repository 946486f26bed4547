-- The offer item contract (scrapers.items.OfferItem): `pool_id`, the shared stock count an offer is
-- one listing of. A platform that reports one count and lists it as several offers (RunPod's pod
-- sizes 1x, 2x, 4x, 8x of one GPU type and cloud, each "in stock" meaning at least one pod of that
-- size) gives those offers one pool_id; the stock figures (definitions/00_free_gpus.sql) count a
-- pool once, by its largest listing. NULL = the offer is its own count (or its machine's,
-- machine_id). History imported before this migration keeps NULL.
ALTER TABLE offers ADD COLUMN pool_id VARCHAR;
