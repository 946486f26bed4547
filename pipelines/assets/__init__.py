"""Asset factories, one file per stage: crawls, warehouse loading, plans, digest."""
