# Two commands on a fresh machine: `make demo` and `make test`. Both create .venv and install the project.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
VARIANT ?= indian

.PHONY: demo test test-slow native sandbox clients test-clients protos lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,native]'
	touch $(STAMP)

# The rules core compiled by mypyc (referee/native.py, which lists its sources), rebuilt when its build is absent
# or one of them changed; without a C compiler the build says why and the plain Python modules run.
# RUMMY_PURE_PYTHON=1 runs them anyway.
native: $(STAMP)
	$(VENV)/bin/referee native build --optional --if-stale

# bubblewrap (bwrap): the sandbox each tournament bot runs in (tournaments/sandbox.py, docs/THREAT-MODEL.md),
# installed when missing; without root the install fails with a warning and bots run unsandboxed, said loudly
sandbox:
	@command -v bwrap >/dev/null || bash scripts/apt-install.sh bubblewrap || \
	  echo "warning: could not install bubblewrap: tournament bots will run WITHOUT a sandbox" >&2

demo: $(STAMP) native sandbox
	$(PY) -m tournaments.demo --variant $(VARIANT)

test: $(STAMP) native sandbox
	$(PY) -m pytest -q

# the slow tests: a soak of 200 concurrent matches, a thousand black-box leak-checked matches per variant, fuzzing
# with more examples (RUMMY_LEAK_MATCHES sets the matches per variant)
test-slow: $(STAMP) native
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
	$(VENV)/bin/ruff check referee tournaments clients/python/rummybot tests bench environments
	$(VENV)/bin/mypy referee tournaments environments/rummy_env

# Benchmarks (never part of `make test`): installs the `bench` extra (OpenSpiel, RLCard), prints a table and
# writes bench-results.json. `make bench BENCH_ARGS=--quick` is a short smoke run.
bench: $(STAMP) native
	$(PY) -m pip install --quiet -e '.[dev,native,bench]'
	$(PY) -m bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build/native
