# The everyday commands, so a newcomer need not read .ci/run (README, "Tests and benchmarks").
# Run inside the project's virtual environment (python3 -m venv .venv && . .venv/bin/activate).
.PHONY: install test-fast test lint demo dev ci

install:  ## the README's install command
	pip install -e ".[dev]"

test-fast:  ## the fast loop: everything not marked slow (about a minute on two cores)
	python -m pytest -m "not slow"

test:  ## the whole suite, as CI runs it
	python -m pytest

lint:  ## lint, formatting, types and the generated schema, as CI checks them
	ruff check .
	ruff format --check .
	mypy
	python -m warehouse.schema --check

demo:  ## the main job on the bundled snapshots, no network
	gpuplan refresh --offline

# The instance folder: its copy of config/dagster.yaml and the run history (README, "The Dagster UI").
DAGSTER_HOME ?= $(CURDIR)/data/dagster

dev:  ## the Dagster UI on http://127.0.0.1:3000
	mkdir -p "$(DAGSTER_HOME)"
	[ -f "$(DAGSTER_HOME)/dagster.yaml" ] || cp config/dagster.yaml "$(DAGSTER_HOME)/"
	DAGSTER_HOME="$(DAGSTER_HOME)" dg dev

ci:  ## what CI runs (.ci/run): a fresh venv, the install command, the checks, the suite
	bash .ci/run
