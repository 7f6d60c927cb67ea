# Set-up and entry points. `make test` and `make demo` create .venv when it is missing.
#   make test       the whole suite (every test, the `slow` ones included): what CI runs; it
#                   also makes .venv-jax (requirements-jax.txt), where the exported-step tests
#                   run bench/device_step.py
#   make test-fast  the suite without the tests marked `slow` (those of 3 s or more: runs,
#                   exports, served processes, XLA compiles, benchmark harnesses; see
#                   pytest.ini): for the edit-test loop, under 5 minutes on two cores
#   make demo       the quickstart end to end (scripts/demo.sh: MLM, 1,400 steps, ~15 min);
#                   make demo-electra: ELECTRA, 1,000 steps; make demo-full: ELECTRA, 4,000 steps
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# bench/device_step.py's environment: numpy and jax, no TensorFlow (requirements-jax.txt).
JAX_VENV := .venv-jax
JAX_STAMP := $(JAX_VENV)/.installed

.PHONY: test test-fast demo demo-electra demo-full bench jax-env clean-venv

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

$(JAX_STAMP): requirements-jax.txt
	test -x $(JAX_VENV)/bin/python || $(PYTHON) -m venv $(JAX_VENV) || python3 -m venv $(JAX_VENV)
	$(JAX_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(JAX_VENV)/bin/python -m pip install --quiet -r requirements-jax.txt
	touch $(JAX_STAMP)

# The jax environment alone (make test makes it too).
jax-env: $(JAX_STAMP)

# Two pytest-xdist workers (TEST_WORKERS=N for more cores, =0 for one process): most of a
# test is single-threaded Python (tracing, building models), so one process leaves a core
# idle (2026-11-27: 68.6 min in one process, 42.2 min in two; the suite's times since:
# BUILD.md and bench/HISTORY.md).
# tests/conftest.py keeps a file whose module fixtures are built once, and a shared session
# fixture's tests, on one worker.
TEST_WORKERS ?= 2
PYTEST := $(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

test: $(STAMP) $(JAX_STAMP)
	$(PYTEST) tests

test-fast: $(STAMP) $(JAX_STAMP)
	$(PYTEST) -m "not slow" tests

demo: $(STAMP)
	bash scripts/demo.sh $(PY)

# The same with the quickstart ELECTRA (configs/quickstart.gin): the same time, no gain yet.
demo-electra: $(STAMP)
	DEMO=electra bash scripts/demo.sh $(PY)

# ELECTRA with the 4,000-step pretraining recipe (configs/quickstart_full.gin): ~3x longer.
demo-full: $(STAMP)
	DEMO=full bash scripts/demo.sh $(PY)

bench: $(STAMP)
	@echo "Benchmarks are run one by one; see BUILD.md, section Benchmarks."

clean-venv:
	rm -rf $(VENV) $(JAX_VENV)
