# Fresh machine: `make serve` (install, load HPO + ICD-10-CM, build with the shipped model, serve)
# and `make test`. Everything installs into .venv; torch comes from the local CPU wheel;
# Debian's chromium (for the browser tests) comes from apt when /usr/bin/chromium is missing;
# NLM's LHC-Forms (a real FHIR client, for one browser test) and fhir-kit-client (a Node FHIR client,
# for one FHIR test) from the npm registry, pinned.
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

CHROMIUM := /usr/bin/chromium

$(CHROMIUM):
	apt-get update -qq && apt-get install -y --no-install-recommends chromium

LFORMS := var/vendor/lforms-40.1.3

$(LFORMS):
	mkdir -p var/vendor/tmp && cd var/vendor/tmp && npm pack --silent lforms@40.1.3 && tar xzf lforms-40.1.3.tgz
	mkdir -p $@/fhir && mv var/vendor/tmp/package/dist/lforms/webcomponent $@/ && mv var/vendor/tmp/package/dist/lforms/fhir/R4 $@/fhir/
	mv var/vendor/tmp/package/LICENSE.md $@/ && rm -rf var/vendor/tmp

FHIR_KIT := var/vendor/fhir-kit-client-1.9.2

$(FHIR_KIT):
	mkdir -p $@.tmp && npm install --silent --no-audit --no-fund --prefix $@.tmp fhir-kit-client@1.9.2 && mv $@.tmp $@

install: $(VENV)/.installed

build: install
	$(PY) -m indexer setup

serve: build
	$(PY) -m app --host $(HOST) --port $(PORT)  # uvicorn with the api limits (docs/OPERATIONS.md)

test: install $(CHROMIUM) $(LFORMS) $(FHIR_KIT)
	$(PY) .ci/lint  # ruff and mypy: no finding beyond .ci/lint-baseline.json
	$(PY) -m pytest

clean:
	rm -rf $(VENV) var
