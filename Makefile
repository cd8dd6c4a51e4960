# Targets shared by people and CI. Each one installs what it needs into .venv, exactly
# the versions in uv.lock (docs/DEVELOPING.md, "Dependencies, and why").
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

# uv, pinned, in a folder of its own: `uv sync` makes .venv exactly what the lock says,
# so uv must not live in it. The stamp carries the version: a pull that changes
# UV_VERSION installs that uv at the next make (pyproject.toml's required-version
# refuses any other; tests/test_packaging.py keeps the two, and the Dockerfile's, equal).
UV_VERSION := 0.13.9
TOOLS  := .tools
UV_STAMP := $(TOOLS)/.uv-$(UV_VERSION)
# uv runs $(PYTHON), this very interpreter (its path: a bare `python3` uv would read as
# a version request and might pick another), never one it downloads.
PYTHON_PATH := $(shell $(PYTHON) -c 'import sys; print(sys.executable)' 2>/dev/null)
export UV_PYTHON_DOWNLOADS := never
export UV_PYTHON := $(PYTHON_PATH)
export UV_PROJECT_ENVIRONMENT := $(VENV)
UV     = $(if $(PYTHON_PATH),,$(error $(PYTHON) does not run: name a Python 3.11+ with PYTHON=))$(TOOLS)/bin/uv
# --locked: a pyproject.toml that no longer matches uv.lock fails here (run make lock).
SYNC   = $(UV) sync --locked

# What each target needs in .venv. No stamps: uv sync runs every time (when nothing
# changed it checks and returns in a few hundredths of a second), so a changed lock,
# another PYTHON (uv recreates .venv for it) or a package removed by hand is seen at
# once. make run and make play add to .venv (--inexact) without taking away what make
# test put there; make dev syncs it exactly. test-lowest and test-latest name their
# own venv's stamp as DEV, and make syncs nothing into .venv then.
RUNTIME := runtime
CLIENT  := client
DEV     := dev

# run-wallet: wallet mode beside the reference wallet
.PHONY: run-wallet
.PHONY: run play demo test lint typecheck pytest pytest-cluster bench clean browser postgres balancer prometheus vendor vendor-check lock test-lowest test-latest uv runtime client dev

## uv: install uv, the pinned version, in .tools
uv: $(UV_STAMP)

$(UV_STAMP):
	rm -rf $(TOOLS)
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet 'uv==$(UV_VERSION)'
	touch $@

## runtime: install the server alone in .venv: no client, no PostgreSQL driver, no tools
runtime: $(UV_STAMP)
	$(SYNC) --inexact --no-dev

## client: install the server and the terminal client in .venv
client: $(UV_STAMP)
	$(SYNC) --inexact --no-dev --extra cli

## dev: install everything in .venv: every extra and the dev group (tests, lint, types)
dev: $(UV_STAMP)
	$(SYNC) --all-extras --group dev

## lock: resolve every dependency anew at its newest release allowed (then make test)
lock: $(UV_STAMP)
	$(UV) lock --upgrade

## run: start the server on its embedded Redis (data in ./data), ready to play
run: $(RUNTIME)
	$(BIN)/paigow-server --data-dir data

## run-wallet: the server in wallet mode beside the reference wallet (its API on port
## 8790, a player it does not know starting with 10000); Ctrl-C stops both. Players sign
## in with a token (make-able with `paigow-server token --player P`).
run-wallet: $(RUNTIME)
	@mkdir -p data
	$(BIN)/python -m server.wallet.reference --port 8790 --secret dev-wallet-secret \
		--db data/wallet.sqlite3 --opening-balance 10000 & wallet=$$!; \
	trap 'kill $$wallet 2>/dev/null' EXIT INT TERM; \
	$(BIN)/paigow-server --data-dir data --wallet-url http://127.0.0.1:8790/ \
		--wallet-secret dev-wallet-secret

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

# The tests run side by side, one worker a core (at least two), each its own pytest
# session with its own Redis, ports and folders; worksteal keeps the minute-long process
# tests from finishing last. Not two a core: each worker starts servers, Redis and
# Chromium of its own, and at two a core a fresh clone's run failed three timing tests
# at once. `make WORKERS=0 pytest` runs them one after another.
WORKERS ?= $(shell $(PYTHON) -c 'import os; print(max(2, os.cpu_count() or 1))')
XDIST   := -n $(WORKERS) --dist worksteal

pytest: $(DEV) browser postgres balancer prometheus
	$(BIN)/pytest $(XDIST)

## pytest-cluster: the store, money, archive and guest tests on a local Redis Cluster of
## three primaries
CLUSTER_TESTS := tests/server/store tests/server/host tests/server/gateway/test_money.py \
	tests/e2e/test_process_transfers.py tests/server/test_cli.py tests/server/archive \
	tests/server/gateway/test_credentials.py
pytest-cluster: $(DEV) postgres
	$(BIN)/pytest $(XDIST) --redis-cluster $(CLUSTER_TESTS)

## test-lowest: the suite (pytest and the cluster run) on the oldest release of each
## direct dependency that pyproject.toml allows, in .venv-lowest: run it after changing
## a bound or the lock, and before a release. Lint and type checks run on the lock only
## (ruff's and mypy's releases change their rules).
LOWEST := .venv-lowest
test-lowest: $(UV_STAMP)
	rm -rf $(LOWEST)
	$(UV) venv --quiet $(LOWEST)
	$(UV) pip install --python $(LOWEST)/bin/python --resolution lowest-direct \
		-e '.[cli,postgres]' --group test
	touch $(LOWEST)/.installed
	$(MAKE) pytest pytest-cluster BIN=$(LOWEST)/bin DEV=$(LOWEST)/.installed

## test-latest: the same on the newest release of everything, the lock ignored, in
## .venv-latest: what `make lock` would bring, tried before it is committed
LATEST := .venv-latest
test-latest: $(UV_STAMP)
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

## prometheus: Debian's Prometheus and promtool for tests/deploy's monitoring tests, if missing
prometheus:
	@tests/deploy/install_prometheus.sh

## vendor: fetch the web client's pinned msgpack library (server/web/vendor.sh) and the
## browser tests' axe-core (tests/web/vendor_axe.sh); needs npm
vendor:
	server/web/vendor.sh
	tests/web/vendor_axe.sh

## vendor-check: fetch them again and compare with the committed copies
vendor-check:
	server/web/vendor.sh --check
	tests/web/vendor_axe.sh --check

## schema-js: write the web client's message tables from protocol/ (a test checks they are current)
.PHONY: schema-js
schema-js: $(DEV)
	$(BIN)/python -m protocol.schema_js server/web/static/js/schema.js

## bench: print the performance figures (benchmarks, not tests)
bench: $(DEV)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) $(TOOLS) .venv-lowest .venv-latest .mypy_cache .pytest_cache .ruff_cache .hypothesis .import_linter_cache .grimp_cache
