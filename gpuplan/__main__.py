"""`python -m gpuplan`: the same as the `gpuplan` command."""

from gpuplan.cli import run

run()
