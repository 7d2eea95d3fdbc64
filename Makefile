PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# pytest keeps each test module's rewritten bytecode only where Python may write bytecode:
# with PYTHONDONTWRITEBYTECODE set (some shells and containers set it) every run would parse
# and rewrite all the test modules again, about 9 s of a 2-core machine's inner loop.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo check test bench bench-report clean

$(BIN)/ozlab: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,parquet]'
	# Compiled once, as a regular install compiles: an editable one does not, and where
	# PYTHONDONTWRITEBYTECODE is set every command would compile the modules it imports.
	$(BIN)/python -m compileall -q bot analytics scenarios questionnaires wizard_console lab_web
	touch $@

demo: $(BIN)/ozlab
	$(BIN)/ozlab demo --db ozlab-demo.sqlite
	$(BIN)/ozlab report --db ozlab-demo.sqlite

# The inner loop: lint, types, and the unit and contract tests (not the ones marked slow,
# which run whole commands, reports or bots); 62-65 s on 2 idle cores once .venv exists
# (2,747 tests; the goal is under a minute).
# On two workers: the unit tests' time is computation (statistics, reports), about 100 s of
# CPU, which an idle second core halves; each worker collects the tests (6 s) and starts its
# own PostgreSQL server. (On a machine busy with other work it is no faster.)
check: $(BIN)/ozlab
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	OPENBLAS_NUM_THREADS=1 $(BIN)/pytest -q -n 2 -m "not slow"

# Everything, as CI runs it: on three workers (-n 3) on two cores, as about a fifth of the
# suite waits on bots, servers and browsers rather than computes (466 s against 546 s on two
# workers); each worker starts its own throw-away PostgreSQL server. One BLAS thread a
# worker: OpenBLAS's own threads, two a process, contend with the workers on a busy machine
# and the statistics' small matrices gain nothing from them.
# .ci/packages installs what the suite needs from Debian (Chromium, TeX Live, PostgreSQL)
# where it is missing, or stops before the suite naming the command to run as root.
test: $(BIN)/ozlab
	.ci/packages
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	OPENBLAS_NUM_THREADS=1 $(BIN)/pytest -q -n 3
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

bench: $(BIN)/ozlab
	$(BIN)/pip install --quiet -e '.[test,bench]'
	$(BIN)/python bench/exchanges.py
	$(BIN)/python bench/adapters.py

bench-report: $(BIN)/ozlab
	$(BIN)/python bench/report.py

clean:
	rm -rf $(VENV) *.egg-info
