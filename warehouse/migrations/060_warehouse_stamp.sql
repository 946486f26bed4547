-- Which writer session wrote this file (issue 14): one row, carried into the published copy.
-- `generation` counts the writer sessions of this warehouse: every session adds one when it opens,
-- so a published copy holds its writer's number and a writer file older than the published
-- snapshot (restored from a backup, or left from before the snapshot was replaced) has a smaller
-- one, and is never published over it. `prepared_for` names the migrations and bundled FX rates
-- the file was last prepared with: a writer that finds its own there skips both (once per code
-- version, not once per writing step).
CREATE TABLE warehouse_stamp (
    generation    BIGINT NOT NULL,
    written_at    TIMESTAMP NOT NULL,   -- UTC, when that session opened
    prepared_for  VARCHAR
);
INSERT INTO warehouse_stamp VALUES (0, now() AT TIME ZONE 'UTC', NULL);
