# aligner: the two set-up commands are `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint format demo install peers clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -e ".[test]"
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadgroup -q

lint: $(STAMP)
	$(BIN)/ruff check aligner tests scripts
	$(BIN)/ruff format --check aligner tests scripts

format: $(STAMP)
	$(BIN)/ruff format aligner tests scripts
	$(BIN)/ruff check --fix aligner tests scripts

demo: $(STAMP)
	$(BIN)/aligner demo

# The peer aligner (PocketSphinx) in an environment of its own inside the checkout:
# scripts/pocketsphinx_align.py and its test find it there (or at $$POCKETSPHINX_PYTHON).
PEERS := .peers/pocketsphinx
$(PEERS)/.installed:
	$(PY) -m venv $(PEERS)
	$(PEERS)/bin/pip install -q --upgrade pip
	$(PEERS)/bin/pip install -q pocketsphinx==5.1.1 soundfile numpy praatio scipy
	touch $@

peers: $(PEERS)/.installed

clean:
	rm -rf $(VENV) .peers .pytest_cache
