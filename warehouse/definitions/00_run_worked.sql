-- A run worked when its status is ok or partial: its offers count (a partial run's stock may be
-- incomplete, or some of its records were rejected). A failed or skipped run's stray items are
-- history, not offers. Every view and query that asks whether a run worked calls this; Python asks
-- scrapers.summary.WORKED_STATUSES, which tests/warehouse/test_migrate_definitions.py holds equal to it.
CREATE OR REPLACE MACRO run_worked(status) AS status IN ('ok', 'partial');
