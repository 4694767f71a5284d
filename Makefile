# One command to open the course, one to test it. See README.md.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PORT   ?= 8888
JOBS   ?= 2

.PHONY: setup lab test test-fast notebooks check-notebooks bench solutions clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[lab,test,gpu]"
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ipykernel)" >/dev/null
	touch $@

## Open the course in JupyterLab (prints the URL with its token).
lab: setup
	$(PY) -m labutil.serve --port $(PORT)

## The whole test suite: unit/property/validation tests + nbval over every notebook.
test: setup
	$(PY) -m pytest -n $(JOBS) --dist loadscope --nbval-lax --nbval-current-env \
	    --nbval-sanitize-with tests/nbval_sanitize.cfg --timeout 900 \
	    tests chapters labs

## Unit tests only (no notebooks).
test-fast: setup
	$(PY) -m pytest -n $(JOBS) tests

## Regenerate the committed .ipynb from their py:percent sources (executes them).
notebooks: setup
	$(PY) -m labutil.nbtools build $(NB)

check-notebooks: setup
	$(PY) -m labutil.nbtools check

## Speed targets (explorer latency, layout search, Monte Carlo); results in benchmarks/results/.
bench: setup
	$(PY) benchmarks/run_all.py

## Instructors: print every exercise's worked solution.
solutions: setup
	$(PY) -m labutil.exercises --solutions

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
