PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean

$(BIN)/ozlab: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

demo: $(BIN)/ozlab
	$(BIN)/ozlab demo

test: $(BIN)/ozlab
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pytest -q

bench: $(BIN)/ozlab
	$(BIN)/pip install --quiet -e '.[test,bench]'
	$(BIN)/python bench/exchanges.py

clean:
	rm -rf $(VENV) *.egg-info
