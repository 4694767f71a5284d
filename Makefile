# One command to open the course, one to test it. See README.md.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PORT   ?= 8888
JOBS   ?= 2
# `make test` installs a CPU build of torch (the labs' gloo path), never a CUDA one: the local
# version label `+cpu` only exists on PyTorch's CPU wheel index (PyPI's Linux torch is a CUDA 13
# build of several GB). macOS wheels on PyPI are CPU builds and carry no label.
TORCH_CPU_VERSION ?= 2.13.0
TORCH_CPU_INDEX   ?= https://download.pytorch.org/whl/cpu
ifeq ($(shell uname -s),Darwin)
TORCH_CPU_SPEC ?= torch==$(TORCH_CPU_VERSION)
else
TORCH_CPU_SPEC ?= torch==$(TORCH_CPU_VERSION)+cpu
endif
# `make gpu CUDA=cu126|cu130`: torch from PyTorch's wheel index for that CUDA (README; no cu128 wheels
# since torch 2.12, so CUDA=cu128 would install torch 2.11).
CUDA ?= cu130

# constraints.txt: the tested versions of every package the lab, book and test extras pull in (not
# torch, chosen per machine; not labutil itself). Every pip install below uses it, so CI, `make test`
# and the classroom images resolve the same versions on any day; `make lock` refreshes it.
CONSTRAINTS ?= constraints.txt
PIP_C := -c $(CONSTRAINTS)
LOCK_VENV ?= build/lock-venv
# `make test-python PYNEW=python3.13`: the model tests on another Python (a venv in build/)
PYNEW ?= python3.13

.PHONY: setup lab test test-fast test-python notebooks check-notebooks bench solutions book editions assignments gpu lock \
        syllabus slurm-test clean

# Stamps: each install step reruns only when pyproject.toml changes (or the stamp is missing).
setup: $(VENV)/.test-installed

$(VENV)/.created:
	$(PYTHON) -c 'import sys; sys.exit("Python >= 3.11 is needed (tomllib); this is " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	touch $@

# Learner: read and play (JupyterLab, widgets, zh-CN interface). No test tools, no torch.
$(VENV)/.lab-installed: pyproject.toml $(CONSTRAINTS) $(VENV)/.created
	$(PY) -m pip install -q $(PIP_C) -e ".[lab]"
	$(PY) -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (ipykernel)" >/dev/null
	touch $@

# Course site builder (Sphinx + myst-nb + sphinx-book-theme, offline) and a CPU torch: the site
# executes every notebook, the labs on their CPU (gloo) path.
$(VENV)/.book-installed: pyproject.toml $(CONSTRAINTS) $(VENV)/.lab-installed
	$(PY) -m pip install -q $(PIP_C) -e ".[lab,book]"
	$(PY) -m pip install -q $(PIP_C) --retries 1 "$(TORCH_CPU_SPEC)" --extra-index-url $(TORCH_CPU_INDEX)
	touch $@

# Tests: test tools on top of the above (the suite also builds the site).
$(VENV)/.test-installed: pyproject.toml $(CONSTRAINTS) $(VENV)/.book-installed
	$(PY) -m pip install -q $(PIP_C) -e ".[lab,book,test]"
	touch $@

## Open the course in JupyterLab (prints the URL with its token).
lab: $(VENV)/.lab-installed
	$(PY) -m labutil.serve --port $(PORT)

## GPU machine: torch for this driver from PyTorch's CUDA wheel index (README: 选择 torch 版本).
gpu: $(VENV)/.lab-installed
	$(PY) -m pip install $(PIP_C) "$$($(PY) -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["gpu"][0])')" \
	    --index-url https://download.pytorch.org/whl/$(CUDA)
	-$(PY) -m labutil doctor

## The whole test suite: unit/property/validation tests + nbval over every notebook.
test: setup
	$(PY) -m pytest -n $(JOBS) --dist loadscope --nbval-lax --nbval-current-env \
	    --nbval-sanitize-with tests/nbval_sanitize.cfg --timeout 900 \
	    tests chapters labs

## Unit tests only (no notebooks).
test-fast: setup
	$(PY) -m pytest -n $(JOBS) tests

## The course site, offline: _site/index.html (course map, chapters and labs in module order).
book: $(VENV)/.book-installed
	$(PY) book/build.py --out _site --jobs $(JOBS)

## Learner edition (no solutions) and instructor edition (worked solutions) of every notebook.
editions: $(VENV)/.lab-installed
	$(PY) -m labutil.nbtools editions --out editions

## Graded classes: every chapter's exercises as an nbgrader course in assignments/ (source/ with the
## solutions and hidden autograder tests; release/ without them when nbgrader is installed, e.g. from
## the classroom extra). CHAPTERS="ch01 ch02" limits it. See classroom/README.md.
assignments: $(VENV)/.lab-installed
	$(PY) -m labutil.grading assignments --out assignments $(if $(CHAPTERS),--chapters $(CHAPTERS))

## The Slurm templates under a real Slurm of two nodes on this host (installs slurm-wlm + munge when
## root and missing; skips with the reason where Slurm cannot run). See tests/slurm/setup_slurm.sh.
slurm-test: setup
	@rc=0; bash tests/slurm/setup_slurm.sh --install >/dev/null || rc=$$?; \
	if [ $$rc = 77 ]; then req=0; else req=1; fi; \
	LABUTIL_REQUIRE_SLURM=$$req $(PY) -m pytest -q -rs tests/test_slurm.py

## Regenerate the committed .ipynb from their py:percent sources (executes them).
notebooks: setup
	$(PY) -m labutil.nbtools build $(NB)

check-notebooks: setup
	$(PY) -m labutil.nbtools check

## Speed targets (explorer latency, layout search, Monte Carlo); results in benchmarks/results/.
bench: setup
	$(PY) benchmarks/run_all.py

## Refresh constraints.txt: resolve the lab, book and test extras in a fresh venv (the newest versions
## pyproject's ranges allow, for this Python), freeze it without torch and labutil, then `make test`.
lock:
	rm -rf $(LOCK_VENV)
	$(PYTHON) -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install -q --upgrade pip
	$(LOCK_VENV)/bin/python -m pip install -q ".[lab,book,test]"
	{ echo "# Tested versions (make lock, Python $$($(LOCK_VENV)/bin/python -c 'import platform; print(platform.python_version())')): used by every pip install"; \
	  echo "# of the Makefile and by classroom/Dockerfile and classroom/course.def. torch and labutil are not listed."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --exclude-editable | grep -v -i -E '^(labutil|torch)( |=|@)'; } > $(CONSTRAINTS).tmp
	mv $(CONSTRAINTS).tmp $(CONSTRAINTS)
	rm -rf $(LOCK_VENV)

## The model tests (no Jupyter, no torch) on another Python, e.g. the newest one installed:
## `make test-python PYNEW=python3.13`. Uses pyproject's ranges (constraints.txt is for CI's 3.11).
test-python:
	$(PYNEW) -m venv build/venv-$(notdir $(PYNEW))
	build/venv-$(notdir $(PYNEW))/bin/python -m pip install -q ".[test]" ipywidgets
	build/venv-$(notdir $(PYNEW))/bin/python -m pytest -q -p no:cacheprovider \
	    $$(build/venv-$(notdir $(PYNEW))/bin/python -c 'import sys; sys.path.insert(0, "tests"); import test_install; print(" ".join(test_install.model_test_files()))')

## docs/SYLLABUS.md from labutil/data/course.toml and the chapters' and labs' learning objectives.
syllabus:
	$(PY) -m labutil.syllabus

## Instructors: print every exercise's worked solution.
solutions: $(VENV)/.lab-installed
	$(PY) -m labutil.exercises --solutions

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis _site editions build/book build/lock-venv build/venv-*
