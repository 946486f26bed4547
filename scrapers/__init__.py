"""Scrapy project: GPU rental quotes from the platforms into offer items (JSONL). No database, no Dagster."""
