# Two commands on a fresh machine: `make demo` and `make test`. Both create .venv and install the project.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
VARIANT ?= indian

.PHONY: demo test test-slow native clients test-clients protos lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,native]'
	touch $(STAMP)

# The rules core compiled by mypyc (referee/native.py), rebuilt when one of its sources changes; without a C
# compiler the build says why and the plain Python modules run. RUMMY_PURE_PYTHON=1 runs them anyway.
NATIVE := build/native/manifest.json
NATIVE_SOURCES := referee/errors.py referee/cards.py referee/melds.py referee/match.py $(wildcard referee/variants/*.py)

$(NATIVE): $(STAMP) $(NATIVE_SOURCES)
	$(VENV)/bin/referee native build --optional

native: $(NATIVE)

demo: $(STAMP) $(NATIVE)
	$(PY) -m tournaments.demo --variant $(VARIANT)

test: $(STAMP) $(NATIVE)
	$(PY) -m pytest -q

# the slow tests: a soak of 200 concurrent matches, a thousand black-box leak-checked matches per variant, fuzzing
# with more examples (RUMMY_LEAK_MATCHES sets the matches per variant)
test-slow: $(STAMP) $(NATIVE)
	$(PY) -m pytest -q -m slow -p no:cacheprovider -s

# Every client SDK in clients/LANG is built by its own build.sh, which installs what it needs (apt, npm, go,
# cargo, maven); test-clients then plays each against the Python bots and fails if any is missing.
CLIENT_LANGS ?= node go java rust cpp

clients: $(STAMP)
	@set -e; for lang in $(CLIENT_LANGS); do echo "== building the $$lang client"; bash clients/$$lang/build.sh; done

test-clients: clients
	RUMMY_REQUIRE_CLIENTS=1 CLIENT_LANGS="$(CLIENT_LANGS)" $(PY) -m pytest -q tests/clients

protos: $(STAMP)
	$(PY) -m referee.protogen

lint: $(STAMP)
	$(VENV)/bin/ruff check referee tournaments clients/python/rummybot tests bench
	$(VENV)/bin/mypy referee tournaments

# Benchmarks (never part of `make test`): installs the `bench` extra (OpenSpiel, RLCard), prints a table and
# writes bench-results.json. `make bench BENCH_ARGS=--quick` is a short smoke run.
bench: $(STAMP) $(NATIVE)
	$(PY) -m pip install --quiet -e '.[dev,native,bench]'
	$(PY) -m bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build/native
