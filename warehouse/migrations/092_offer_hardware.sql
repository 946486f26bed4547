-- The offer item contract of issues 26 and 27 (scrapers.items.OfferItem): what a platform says about
-- the hardware behind an offer, and where a catalog row came from. All NULL when unsaid; history
-- imported before this migration, and imports that do not say, keep NULL.
--   gpu_frac      the share of ONE card a unit gives (a sliced GPU: Vultr vcg-a100-1c-6g-4vram, Azure
--                 NC*_A10_v5, Vast gpu_frac), 0 < x < 1; NULL = whole cards. Stored and shown, never
--                 planned as a card, never a price reference, never counted as cards in stock.
--   machine_id    the physical machine the offer rents on (Vast machine_id): offers sharing it share GPUs
--   gpu_ids       which of the machine's GPUs the offer rents (Vast gpu_ids)
--   catalog       the hosted catalog the offer came from (e.g. 'skypilot-catalog/v8'); NULL = the
--                 platform's own API or page
--   catalog_date  the date of that catalog file, when the source gives one
ALTER TABLE offers ADD COLUMN gpu_frac DOUBLE;
ALTER TABLE offers ADD COLUMN machine_id VARCHAR;
ALTER TABLE offers ADD COLUMN gpu_ids INTEGER[];
ALTER TABLE offers ADD COLUMN catalog VARCHAR;
ALTER TABLE offers ADD COLUMN catalog_date DATE;
