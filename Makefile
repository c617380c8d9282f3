# aligner: the two set-up commands are `make demo` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: test lint format demo install clean

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

clean:
	rm -rf $(VENV) .pytest_cache
