# The README names these targets. `make run` and `make test` each install what they need.
.PHONY: install install-test run test lint typecheck bench

install:
	bash scripts/install.sh

install-test:
	bash scripts/install.sh --test

run: install
	python3 -m aios start

# the suite on one worker per core (at most 4); a module's tests stay on one worker,
# so a module-wide system or browser is started once
test: install-test
	python3 -m ruff check .
	python3 -m pytest -n auto --maxprocesses=4 --dist loadfile

lint:
	python3 -m ruff check . && python3 -m ruff format --check .

typecheck:
	python3 -m mypy

bench: install
	python3 -m aios bench
