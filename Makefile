# One target per habit. `make help` lists them.
PY ?= python

.PHONY: help dev build test test-rust test-py lint fmt typecheck stubtest bench bench-full bench-rust bench-e2e ci

help:  ## list targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

dev:  ## build the extension in release mode into the active virtualenv (editable)
	maturin develop --release -E test

build:  ## build the abi3 wheel into dist/
	maturin build --release -o dist

test: test-rust test-py  ## all tests

test-rust:  ## Rust kernel unit tests
	cargo test --quiet

test-py:  ## Python tests (parity, properties, CLI)
	$(PY) -m pytest -q

lint:  ## cargo fmt --check, clippy -D warnings, ruff
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --all-targets --features python -- -D warnings
	ruff check python tests benches
	ruff format --check python tests benches

fmt:  ## format Rust and Python
	cargo fmt
	ruff format python tests benches
	ruff check --fix python tests benches

typecheck:  ## mypy --strict on the package, stubtest on the native module
	mypy
	$(PY) -m mypy.stubtest toxeval._core --allowlist .ci/stubtest-allowlist.txt

bench:  ## Python benchmarks against scikit-learn/SciPy/torchmetrics (see benches/README.md)
	$(PY) benches/bench_metrics.py

bench-full:  ## the published run (README "Performance"); BENCH_PY = a Python with torch + torchmetrics for their column
	PYTHONPATH=python $(or $(BENCH_PY),$(PY)) benches/bench_metrics.py --sizes 10k,100k,1M --cap 30 --repeats 3 --out bench-results/full

bench-rust:  ## criterion benches of the Rust kernels
	cargo bench --bench kernels --bench ranking

ci:  ## what CI runs
	bash .ci/run

bench-e2e:  ## end-to-end CLI bench: 1M-row JSONL and Parquet dumps scored by `toxeval score`
	$(PY) benches/bench_end_to_end.py
