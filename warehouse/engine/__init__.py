"""The warehouse's storage engine: open and lock (connect), publish the read snapshot (publishing),
check a file's blocks (blocks, integrity), where each file lives (layout), migrate the schema
(migrate), and run people's SQL read-only and bounded (sandbox). The domain (loading, plans, jobs,
history, imports) is the rest of `warehouse`."""
