# Set-up and entry points. `make test` and `make demo` create .venv when it is missing.
#   make test       the whole suite (every test, the `slow` ones included): what CI runs
#   make test-fast  the suite without the tests marked `slow` (the benchmark harness and the
#                   slowest end-to-end runs; see pytest.ini): for the edit-test loop
#   make demo       the quickstart end to end (scripts/demo.sh: MLM, 1,400 steps, ~15 min);
#                   make demo-electra: ELECTRA, 1,000 steps; make demo-full: ELECTRA, 4,000 steps
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test test-fast demo demo-electra demo-full bench clean-venv

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q tests

test-fast: $(STAMP)
	$(PY) -m pytest -q -m "not slow" tests

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
	rm -rf $(VENV)
