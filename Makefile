# The README names these targets. `make run` and `make test` each install what they need.
.PHONY: install install-test run test lint bench

install:
	bash scripts/install.sh

install-test:
	bash scripts/install.sh --test

run: install
	python3 -m controller start

test: install-test
	python3 -m ruff check .
	python3 -m pytest

lint:
	python3 -m ruff check . && python3 -m ruff format --check .

bench: install
	python3 -m controller bench
