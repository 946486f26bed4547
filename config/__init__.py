"""Settings from the environment, the user's files (one guarded reader), the day, file locks, safe text."""
