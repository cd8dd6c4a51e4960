# Targets shared by people and CI. Each one installs what it needs into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run play demo test lint typecheck pytest pytest-cluster bench clean browser postgres balancer vendor vendor-check

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	# setuptools as the build backend asks (77+: the SPDX license form), for tests/test_packaging.py
	$(BIN)/pip install --quiet --upgrade pip 'setuptools>=77'
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

## run: start the server on its embedded Redis (data in ./data), ready to play
run: $(STAMP)
	$(BIN)/paigow-server --data-dir data

## play: open the terminal client on the local server
play: $(STAMP)
	$(BIN)/paigow-cli

## demo: the rules engine's demonstration round
demo: $(STAMP)
	$(BIN)/paigow-rules demo

## test: lint, type-check and run the whole test suite (the browser tests included),
## then the store, money and archive tests again on a local Redis Cluster
test: lint typecheck pytest pytest-cluster

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP) browser postgres balancer
	$(BIN)/pytest

## pytest-cluster: the store, money, archive and guest tests on a local Redis Cluster of
## three primaries
CLUSTER_TESTS := tests/server/store tests/server/host tests/server/gateway/test_money.py \
	tests/server/test_process_transfers.py tests/server/test_cli.py tests/server/archive \
	tests/server/gateway/test_credentials.py
pytest-cluster: $(STAMP) postgres
	$(BIN)/pytest --redis-cluster $(CLUSTER_TESTS)

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
bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis .import_linter_cache .grimp_cache
