# The two commands a newcomer needs:
#   make lab   set up .venv and open the course in JupyterLab
#   make test  set up .venv and run every test (unit, property, notebooks)
#   make docs  set up .venv and build the docs site into docs/_build/html
#   make student  the student edition of the course, built by nbgrader, in build/student/
VENV    := .venv
PYTHON  := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
EXTRAS  ?= lab,test,docs

.PHONY: lab test lint docs student setup graphviz chromium hub-proxy test-hub test-oldest test-newest bench bench-teachgrad test-gpu clean

setup: $(STAMP) graphviz

# Re-install only when the project's dependencies change.
$(STAMP): pyproject.toml
	@test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(PYTHON) -m pip install --quiet -e ".[$(EXTRAS)]"
	@touch $(STAMP)

# graphviz's `dot` program draws the diagrams; the Python package only wraps it.
graphviz:
	@command -v dot >/dev/null 2>&1 || bash scripts/install-graphviz.sh

# The browser test drives Debian's Chromium (Playwright never downloads one).
chromium:
	@bash scripts/install-chromium.sh

# Prints the URL to open, then serves JupyterLab on notebooks/ (as root too: see the
# script). PORT=8889 or LAB_ARGS="--ip=0.0.0.0" change where it listens.
lab: setup
	VENV=$(VENV) bash scripts/lab.sh

# The class test runs a real JupyterHub, whose proxy is a Node program from npm.
hub-proxy:
	@bash scripts/install-hub-proxy.sh

test: setup chromium hub-proxy lint
	TEACHGRAD_REQUIRE_BROWSER=1 TEACHGRAD_REQUIRE_HUB=1 TEACHGRAD_REQUIRE_NBVAL=1 $(PYTHON) -m pytest

# The linter (ruff, from the `test` extra; its rules are in pyproject.toml): imports in
# order and none unused. `make test` runs it first.
lint: setup
	$(PYTHON) -m ruff check teachgrad tests

# Only the class test: eight students run lesson 2 at once on a local JupyterHub (about
# half a minute); it writes what it measured to test-output/hub/class.json.
test-hub: setup hub-proxy
	TEACHGRAD_REQUIRE_HUB=1 $(PYTHON) -m pytest -s tests/hub

# The declared version range, tested at both ends: the core's unit and property tests in
# a venv of their own holding only teachgrad (editable), pytest and hypothesis.
#   test-oldest  Python 3.10 (pyenv) with the floors pyproject.toml declares, numpy 2.0,
#                ipywidgets 8.0, graphviz 0.20, pinned in tests/constraints/oldest.txt
#   test-newest  Python 3.13 (pyenv) with the newest numpy, ipywidgets and graphviz
# scripts/versions-venv.sh builds each venv (.venv-oldest, .venv-newest) again only when
# its constraints, pyproject.toml or the script change; rm -rf .venv-newest meets releases
# newer than the venv (CI's fresh clone always does). A missing interpreter fails the
# target with what to install. Left out: the notebooks, the browser and Hub tests, and the
# tests that need the lab, grading or bench tools (the student edition, otter, make lab,
# binder/, the Teach a class page's commands, the benchmarks' scripts).
CORE_TESTS := tests --ignore=tests/browser --ignore=tests/hub \
	--ignore=tests/test_student_edition.py --ignore=tests/test_otter.py \
	--ignore=tests/test_lab.py --ignore=tests/test_binder.py \
	--ignore=tests/test_teach_a_class_page.py --ignore=tests/test_benchmarks.py

.venv-%/.installed: tests/constraints/%.txt pyproject.toml scripts/versions-venv.sh
	bash scripts/versions-venv.sh $*
	@touch $@

test-oldest test-newest: test-%: .venv-%/.installed graphviz
	.venv-$*/bin/python -m pytest -o addopts=-q $(CORE_TESTS)

# The student edition: every lesson with its solutions replaced by stubs and its outputs
# and widget state cleared, made by nbgrader's generate_assignment, each lesson its own
# assignment, with course/nbgrader_config.py (scripts/student_edition.py), in
# build/student/ (git-ignored). The lessons in notebooks/ stay the solved edition.
student: setup
	$(PYTHON) scripts/student_edition.py build/student

# The docs site (Sphinx + MyST-NB): executes every lesson afresh, so their outputs and
# widget states are today's; any warning is an error. Then docs/check_site.py opens
# lesson 2 of the built site in Chromium and checks that its stepper steps with no kernel
# and that nothing loads from another host. About a minute.
docs: setup chromium
	rm -rf docs/_build
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html
	$(PYTHON) docs/check_site.py docs/_build/html

# teachgrad against its peers (PyTorch CPU, JAX, HIPS autograd, micrograd, numpy by
# hand): one table of ratios, about 6-10 minutes on 2 cores. The peers live in their own
# venv, .bench-venv (scripts/bench-venv.sh; the `bench` extra), never in .venv, so
# `make test` never installs them. OpenBLAS's core-type settings are dropped for this
# run only, so numpy (the floor) uses its fastest kernels; the table says which.
BENCH_VENV := .bench-venv
BENCH_ENV  ?= env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE TEACHGRAD_KEEP_FREED_MEMORY=1
$(BENCH_VENV)/.installed: pyproject.toml scripts/bench-venv.sh
	BENCH_VENV=$(BENCH_VENV) bash scripts/bench-venv.sh
	@touch $@

bench: $(BENCH_VENV)/.installed
	$(BENCH_ENV) $(BENCH_VENV)/bin/python benchmarks/peers/run.py

# teachgrad's own timing scripts (against hand-written numpy only), in .venv.
bench-teachgrad: setup
	TEACHGRAD_KEEP_FREED_MEMORY=1 $(PYTHON) benchmarks/mlp_gradient.py
	TEACHGRAD_KEEP_FREED_MEMORY=1 $(PYTHON) benchmarks/forward_mode.py
	TEACHGRAD_KEEP_FREED_MEMORY=1 $(PYTHON) benchmarks/recompute_grad.py
	TEACHGRAD_KEEP_FREED_MEMORY=1 $(PYTHON) benchmarks/while_loop.py

# The GPU tests, on a machine with an NVIDIA GPU (scripts/test-gpu.sh says what runs):
# installs CuPy (the `gpu` extra) into .venv if missing, stops with what is missing if
# CuPy cannot reach a GPU, then runs the backend tests and tests/test_gpu.py on CuPy, the
# op table's property tests and the core's other test files (the script lists them) with
# every test on CuPy, and lesson 9 under nbval.
# Everywhere else `make test` runs the same tests, and their CuPy cases skip with the
# reason. The GPU benchmarks: benchmarks/peers/gpu_mlp.py, benchmarks/peers/gpu_peers.py,
# benchmarks/gpu_fusion.py and benchmarks/gpu_conv_formulations.py.
test-gpu: setup
	PYTHON=$(PYTHON) bash scripts/test-gpu.sh

clean:
	rm -rf $(VENV) $(BENCH_VENV) .venv-oldest .venv-newest .hub-proxy .pytest_cache .hypothesis docs/_build docs/lessons docs/api.md
