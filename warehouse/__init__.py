"""The only package that talks to DuckDB: migrations, writer and snapshot, loading, FX, named queries."""
