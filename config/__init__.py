"""Settings from the environment, the user's files (one guarded reader), the schedule's day, file locks."""
