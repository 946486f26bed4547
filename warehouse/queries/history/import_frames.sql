-- Stage an import given as frames (warehouse.imports.load_imported; registered frames
-- import_frame_runs, import_frame_offers, import_frame_refused) as a file is staged: the runs as
-- import_runs, the offers and refused rows in import_rows under their run's (platform, day). An
-- offer's record is its columns that are offer fields (offer_fields), by name, with the fields of
-- its `item_json` (the whole item, when given) over them.
CREATE OR REPLACE TEMP TABLE import_runs AS
SELECT
    CAST(crawl_id AS VARCHAR) AS crawl_id,
    CAST(platform AS VARCHAR) AS platform,
    CAST(day AS DATE) AS day,
    items_yielded,
    rows_refused,
    CAST(problem AS VARCHAR) AS problem
FROM import_frame_runs;

INSERT INTO import_rows BY NAME
SELECT
    r.platform,
    CAST(r.day AS VARCHAR) AS day,
    json_transform(
        json_merge_patch(to_json(o), coalesce(CAST(o.item_json AS VARCHAR), '{}')), to_json(offer_fields())
    ) AS item
FROM import_frame_offers AS o
JOIN import_runs AS r ON r.crawl_id = CAST(o.crawl_id AS VARCHAR);

INSERT INTO import_rows BY NAME
SELECT r.platform, CAST(r.day AS VARCHAR) AS day, CAST(f.raw AS VARCHAR) AS raw, coalesce(CAST(f.reason AS VARCHAR), 'refused by the reader') AS reason
FROM import_frame_refused AS f
JOIN import_runs AS r ON r.crawl_id = CAST(f.crawl_id AS VARCHAR);
