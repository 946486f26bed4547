"""Scrapy project: pulls GPU rental quotes from platforms into offer items (JSONL). No database, no Dagster."""
