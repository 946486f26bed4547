"""Dagster wiring of the daily run: assets, checks, the schedule and resources (`definitions.defs`)."""
