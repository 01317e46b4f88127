# Two commands on a fresh machine: `make demo` and `make test`. Both create .venv and install the project.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
VARIANT ?= indian

.PHONY: demo test protos lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m tournaments.demo --variant $(VARIANT)

test: $(STAMP)
	$(PY) -m pytest -q

protos: $(STAMP)
	$(PY) -m referee.protogen

lint: $(STAMP)
	$(VENV)/bin/ruff check referee tournaments clients/python/rummybot tests bench
	$(VENV)/bin/mypy referee tournaments

bench: $(STAMP)
	$(PY) -m bench.run

clean:
	rm -rf $(VENV)
