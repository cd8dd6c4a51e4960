# Targets shared by people and CI. Each one installs what it needs into .venv, exactly
# the versions in uv.lock (docs/DESIGN.md, "Dependencies, and why").
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

# uv, pinned, in a folder of its own: `uv sync` makes .venv exactly what the lock says,
# so uv must not live in it. It runs $(PYTHON), never an interpreter it downloads.
UV_VERSION := 0.13.9
TOOLS  := .tools
UV     := $(TOOLS)/bin/uv
export UV_PYTHON_DOWNLOADS := never
export UV_PYTHON := $(PYTHON)
export UV_PROJECT_ENVIRONMENT := $(VENV)
# --locked: a pyproject.toml that no longer matches uv.lock fails here (run make lock).
SYNC   := $(UV) sync --locked

# What each target needs in .venv, one stamp each. make run and make play add to .venv
# (--inexact) without taking away what make test put there; make test syncs it exactly.
RUNTIME := $(VENV)/.runtime
CLIENT  := $(VENV)/.client
DEV     := $(VENV)/.dev

.PHONY: run play demo test lint typecheck pytest pytest-cluster bench clean browser postgres balancer vendor vendor-check lock test-lowest test-latest

$(UV):
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet 'uv==$(UV_VERSION)'

# The server alone: no client, no PostgreSQL driver, no tools.
$(RUNTIME): pyproject.toml uv.lock | $(UV)
	$(SYNC) --inexact --no-dev
	touch $@

# The server and the terminal client.
$(CLIENT): pyproject.toml uv.lock | $(UV)
	$(SYNC) --inexact --no-dev --extra cli
	touch $@

# Everything: every extra and the dev group (the tests, lint and type checks).
$(DEV): pyproject.toml uv.lock | $(UV)
	$(SYNC) --all-extras --group dev
	touch $@ $(RUNTIME) $(CLIENT)

## lock: resolve every dependency anew at its newest release allowed (then make test)
lock: | $(UV)
	$(UV) lock --upgrade

## run: start the server on its embedded Redis (data in ./data), ready to play
run: $(RUNTIME)
	$(BIN)/paigow-server --data-dir data

## play: open the terminal client on the local server
play: $(CLIENT)
	$(BIN)/paigow-cli

## demo: the rules engine's demonstration round
demo: $(RUNTIME)
	$(BIN)/paigow-rules demo

## test: lint, type-check and run the whole test suite (the browser tests included),
## then the store, money and archive tests again on a local Redis Cluster
test: lint typecheck pytest pytest-cluster

lint: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(DEV)
	$(BIN)/mypy

# The tests run side by side, two workers a core (most of a test's time is a server's
# timer or a process starting, not CPU), each its own pytest session with its own Redis,
# ports and folders; worksteal keeps the minute-long process tests from finishing last.
# `make WORKERS=0 pytest` runs them one after another.
WORKERS ?= $(shell $(PYTHON) -c 'import os; print(2 * (os.cpu_count() or 1))')
XDIST   := -n $(WORKERS) --dist worksteal

pytest: $(DEV) browser postgres balancer
	$(BIN)/pytest $(XDIST)

## pytest-cluster: the store, money, archive and guest tests on a local Redis Cluster of
## three primaries
CLUSTER_TESTS := tests/server/store tests/server/host tests/server/gateway/test_money.py \
	tests/server/test_process_transfers.py tests/server/test_cli.py tests/server/archive \
	tests/server/gateway/test_credentials.py
pytest-cluster: $(DEV) postgres
	$(BIN)/pytest $(XDIST) --redis-cluster $(CLUSTER_TESTS)

## test-lowest: the suite (pytest and the cluster run) on the oldest release of each
## direct dependency that pyproject.toml allows, in .venv-lowest: run it after changing
## a bound or the lock, and before a release. Lint and type checks run on the lock only
## (ruff's and mypy's releases change their rules).
LOWEST := .venv-lowest
test-lowest: | $(UV)
	rm -rf $(LOWEST)
	$(UV) venv --quiet $(LOWEST)
	$(UV) pip install --python $(LOWEST)/bin/python --resolution lowest-direct \
		-e '.[cli,postgres]' --group test
	touch $(LOWEST)/.installed
	$(MAKE) pytest pytest-cluster BIN=$(LOWEST)/bin DEV=$(LOWEST)/.installed

## test-latest: the same on the newest release of everything, the lock ignored, in
## .venv-latest: what `make lock` would bring, tried before it is committed
LATEST := .venv-latest
test-latest: | $(UV)
	rm -rf $(LATEST)
	$(UV) venv --quiet $(LATEST)
	$(UV) pip install --python $(LATEST)/bin/python --upgrade -e '.[cli,postgres]' --group test
	touch $(LATEST)/.installed
	$(MAKE) pytest pytest-cluster BIN=$(LATEST)/bin DEV=$(LATEST)/.installed

## browser: Debian's Chromium (and a font with the card suits) for tests/web, if missing
browser:
	@tests/web/install_browser.sh

## postgres: Debian's PostgreSQL server for tests/server/archive, if missing
postgres:
	@tests/server/archive/install_postgres.sh

## balancer: Debian's HAProxy for the local topology (deploy/local-cluster.sh), if missing
balancer:
	@deploy/local-cluster.sh install

## vendor: fetch the web client's pinned msgpack library (server/web/vendor.sh; needs npm)
vendor:
	server/web/vendor.sh

## vendor-check: fetch it again and compare with the committed copy
vendor-check:
	server/web/vendor.sh --check

## bench: print the performance figures (benchmarks, not tests)
bench: $(DEV)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(TOOLS) .venv-lowest .venv-latest .mypy_cache .pytest_cache .ruff_cache .hypothesis .import_linter_cache .grimp_cache
