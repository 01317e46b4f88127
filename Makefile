# Two commands on a fresh machine: `make demo` and `make test`. Both create .venv and install the project.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
VARIANT ?= indian

.PHONY: demo test test-slow native sandbox postgres buf-tool buf clients test-clients protos lint bench clean

# The four distributions, editable (one pip run, so each finds the others here): the rules core, the generated
# modules, the Python SDK, and the referee with the tournaments.
DISTS := -e ./referee/rules -e ./protos/python -e ./clients/python
PYPROJECTS := pyproject.toml referee/rules/pyproject.toml protos/python/pyproject.toml clients/python/pyproject.toml

$(STAMP): $(PYPROJECTS)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet $(DISTS) -e '.[dev,native,envs]'
	touch $(STAMP)

# The rules core compiled by mypyc (referee/rules/native.py, which lists its sources), rebuilt when its build is absent
# or one of them changed; without a C compiler the build says why and the plain Python modules run.
# RUMMY_PURE_PYTHON=1 runs them anyway.
native: $(STAMP)
	$(VENV)/bin/referee native build --optional --if-stale

# bubblewrap (bwrap): the sandbox each tournament bot runs in (tournaments/sandbox.py, docs/THREAT-MODEL.md),
# installed when missing; without root the install fails with a warning and bots run unsandboxed, said loudly
sandbox:
	@command -v bwrap >/dev/null || bash scripts/apt-install.sh bubblewrap || \
	  echo "warning: could not install bubblewrap: tournament bots will run WITHOUT a sandbox" >&2

# PostgreSQL (Debian's postgresql package): the ladder's PostgreSQL store is tested on a throwaway server started
# from its initdb and pg_ctl (tests/tournaments/pgserver.py); installed when missing; without root the install fails
# with a warning and those tests are skipped (CI requires them: RUMMY_REQUIRE_POSTGRES=1)
postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || \
	  bash scripts/apt-install.sh postgresql || \
	  echo "warning: could not install postgresql: the ladder's PostgreSQL tests will be skipped" >&2

# buf, the wire contract's linter and breaking-change check (tests/test_wire_contract.py), installed into
# .tools/bin by scripts/buf.sh with `go install` when Go is there; without Go that test skips and says why
buf-tool:
	@if command -v go >/dev/null; then bash scripts/buf.sh --install-only >/dev/null; \
	  else echo "note: Go not found: buf is not installed and the wire contract's check is skipped" >&2; fi

# `buf lint` (STANDARD rules) and `buf breaking` against the contract as v1 settled it (protos/v1.binpb)
buf:
	bash scripts/buf.sh lint
	bash scripts/buf.sh breaking --against v1.binpb

demo: $(STAMP) native sandbox
	$(PY) -m tournaments.demo --variant $(VARIANT)

# three worker processes (pytest-xdist): most tests wait on servers, bots and browsers rather than compute, so
# three share two cores well (8 minutes instead of 12+ on a 2-core host); TEST_JOBS=0 runs them in this process
TEST_JOBS ?= 3

test: $(STAMP) native sandbox postgres buf-tool
	$(PY) -m pytest -q -n $(TEST_JOBS)

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
	$(PY) -m referee.tools.protogen

lint: $(STAMP)
	$(VENV)/bin/ruff check referee tournaments clients/python/rummybot protos/python/rummy/wire tests bench environments
	$(VENV)/bin/mypy referee tournaments protos/python/rummy/wire environments/rummy_env

# Benchmarks (never part of `make test`): installs the `bench` extra (OpenSpiel, RLCard), prints a table and
# writes bench-results.json. `make bench BENCH_ARGS=--quick` is a short smoke run.
bench: $(STAMP) native
	$(PY) -m pip install --quiet $(DISTS) -e '.[dev,native,envs,bench]'
	$(PY) -m bench.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build/native
