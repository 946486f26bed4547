"""The only package that talks to DuckDB: migrations, definitions, writer and snapshot, loading, plans."""
