# The README names these targets. `make run` and `make test` each install what they need
# (scripts/install.sh does nothing when what it reads is unchanged since its last run).
.PHONY: install install-test run test test-fast lint typecheck bench

# Python's byte-code cache, and pytest's cache of rewritten test modules with it, even
# where the environment turns it off: collecting the suite compiles every module
# otherwise, which costs more than half of `make test-fast`'s start. __pycache__ is
# git-ignored.
unexport PYTHONDONTWRITEBYTECODE

# the tests that start a system, a process of ours or a browser (pyproject.toml's markers)
STARTS_PROCESSES := slow or browser or process

install:
	bash scripts/install.sh

install-test:
	bash scripts/install.sh --test

run: install
	python3 -m aios start

# lint and types, then the suite on one worker per core (at most 4); a module's tests
# stay on one worker, so a module-wide system or browser is started once; modules are
# handed out in the order collected (tests/conftest.py puts the longest first), not
# by their number of tests, which left the longest for last
test: lint typecheck
	python3 -m pytest -n auto --maxprocesses=4 --dist loadfile --no-loadscope-reorder

# every test that starts no process of ours and no browser, in under a minute
test-fast: install-test
	python3 -m pytest -m "not ($(STARTS_PROCESSES))" -n auto --maxprocesses=4 -q

lint: install-test
	python3 -m ruff check .
	python3 -m ruff format --check .

typecheck: install-test
	python3 -m mypy

bench: install
	python3 -m aios bench
