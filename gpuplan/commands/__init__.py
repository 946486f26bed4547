"""One module per `gpuplan` sub-command; each exposes `register(app)`."""
