# Fresh machine: `make serve` (install, load HPO + ICD-10-CM, export the model, build, serve)
# and `make test`. Everything installs into .venv; torch comes from the local CPU wheel.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install serve build test bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: $(PY) pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

build: install
	$(PY) -m indexer setup

serve: build
	$(PY) -m uvicorn app.main:app --host $(HOST) --port $(PORT)

test: install
	$(PY) -m pytest

clean:
	rm -rf $(VENV) var
